// CHANGELOG.md is compiled into the binary as text (`with { type: 'text' }`), like the migrations.
declare module '*.md' {
  const text: string;
  export default text;
}
