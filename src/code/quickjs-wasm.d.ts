/** QuickJS's WebAssembly, imported as a file (embedded in the executable by `bun build --compile`). */
declare module '@jitl/quickjs-wasmfile-release-sync/wasm' {
  const path: string;
  export default path;
}
