// The SDK's package.json is outside its `exports` map, so TypeScript cannot see it; Bun bundles it.
declare module 'expo-server-sdk/package.json' {
  const pkg: { name: string; version: string };
  export default pkg;
}
