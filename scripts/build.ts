// Build the single executable:
//   bun run scripts/build.ts [--target bun-linux-x64|bun-linux-arm64] [--outfile dist/parley] [--no-bytecode] [--no-python]
// Everything Parley needs at run time (migrations, docs page, native image binding) is embedded.
// @napi-rs/image picks its binding at run time with `require('@napi-rs/image-linux-<arch>-gnu')`;
// a plugin answers that require with the target's .node file, zstd-compressed, and a loader. For
// the host's CPU the file is the one in node_modules; for another CPU it comes from the target's
// package, fetched (with the target's Bun runtime) by scripts/cross-deps.ts.
import { $, type BunPlugin } from 'bun';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { archOfTarget, bindingPackage, fetchCrossDeps, hostArch } from './cross-deps';
import { bundleWeb, checkWebBudget, kb, WEB_JS_BUDGET_BYTES } from '../src/web/bundle-web';
import { PYODIDE_FILES } from '../src/code/pyodide-dir';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    target: { type: 'string' },
    outfile: { type: 'string', default: 'dist/parley' },
    bytecode: { type: 'boolean', default: true },
    // `--no-python`: without Pyodide (the code interpreter then needs PARLEY_PYODIDE_DIR); measures its share.
    python: { type: 'boolean', default: true },
  },
  allowNegative: true,
});

const root = join(import.meta.dir, '..');
const commit = (await $`git rev-parse --short HEAD`.cwd(root).nothrow().quiet()).stdout.toString().trim() || 'unknown';
const arch = values.target ? archOfTarget(values.target) : hostArch();
const cross = arch !== hostArch() ? await fetchCrossDeps(arch) : undefined;

const pkg = bindingPackage(arch);
// The image binding for the target: the host's from node_modules, another CPU's from the
// package scripts/cross-deps.ts fetched.
const bindingDir = cross ? cross.bindingDir : join(root, 'node_modules', pkg);
const bindingMain = JSON.parse(await Bun.file(join(bindingDir, 'package.json')).text()).main as string;
const zst = await compressedBinding(join(bindingDir, bindingMain));

const plugins: BunPlugin[] = [
  {
    // The binding goes in zstd-compressed (17 MB → ~5.5 MB of the executable) and is
    // decompressed when first loaded: src/images/load-compressed-addon.ts.
    name: 'compressed-image-binding',
    setup(build) {
      const escaped = pkg.replace(/[/.]/g, '\\$&');
      build.onResolve({ filter: new RegExp(`^${escaped}$`) }, () => ({ path: pkg, namespace: 'parley-codec' }));
      build.onResolve({ filter: new RegExp(`^${escaped}/package\\.json$`) }, () => ({ path: join(bindingDir, 'package.json') }));
      build.onLoad({ filter: /.*/, namespace: 'parley-codec' }, () => ({
        loader: 'js',
        contents: `module.exports = require(${JSON.stringify(join(root, 'src/images/load-compressed-addon.ts'))}).loadCompressedAddon(require(${JSON.stringify(zst)}), ${JSON.stringify(bindingMain)});`,
      }));
    },
  },
];

// The web app (docs/web.md): bundled here, measured against its budget (the build fails above
// it), and carried by the executable as embedded files listed in place of src/web/embedded-web.ts's
// empty list. Files, not string literals: a string is kept twice, in the source and in its
// bytecode (1.1 MB of app cost 3.0 MB of binary as strings, bench/RESULTS.md).
const webFiles = await bundleWeb().catch((err: AggregateError) => {
  for (const log of err.errors ?? [err]) console.error(log);
  process.exit(1);
});
try {
  const bytes = checkWebBudget(webFiles);
  console.log(`web app: first-load JavaScript ${kb(bytes)} KB gzip-compressed (budget ${kb(WEB_JS_BUDGET_BYTES)} KB)`);
} catch (err) {
  console.error(`build failed: ${(err as Error).message}`);
  process.exit(1);
}
const webDir = join(root, '.cache', 'build', 'web');
const webEmbeds = await Promise.all(
  webFiles.map(async (f) => {
    const bytes = f.base64 ? Buffer.from(f.text, 'base64') : new TextEncoder().encode(f.text);
    const file = join(webDir, `${Bun.hash(bytes).toString(36)}.webfile`);
    if (!(await Bun.file(file).exists())) await Bun.write(file, bytes);
    return { path: f.path, type: f.type, compressed: !!f.base64, file };
  }),
);
plugins.push({
  name: 'embedded-web',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]web[\\/]embedded-web\.ts$/ }, () => ({
      loader: 'ts',
      contents: `${webEmbeds.map((f, i) => `import w${i} from ${JSON.stringify(f.file)};`).join('\n')}\nexport const embeddedWeb = [${webEmbeds.map((f, i) => `{ path: ${JSON.stringify(f.path)}, type: ${JSON.stringify(f.type)}, compressed: ${f.compressed}, file: w${i} }`).join(', ')}];`,
    }));
  },
});

// Pyodide's core and standard library (the code interpreter, docs/code-interpreter.md): embedded
// zstd-compressed (13.4 → ~5.6 MB), written out once at run time by src/code/pyodide-dir.ts.
const pyodideRoot = join(root, 'node_modules', 'pyodide');
const pyodideFiles = !values.python ? [] : await Promise.all(PYODIDE_FILES.map(async (name) => ({ name, path: await compressedBinding(join(pyodideRoot, name), name) })));
plugins.push({
  name: 'embedded-pyodide',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]code[\\/]embedded-pyodide\.ts$/ }, () => ({
      loader: 'ts',
      contents: `${pyodideFiles.map((f, i) => `import f${i} from ${JSON.stringify(f.path)};`).join('\n')}\nexport const embeddedPyodide = [${pyodideFiles.map((f, i) => `{ name: ${JSON.stringify(f.name)}, path: f${i} }`).join(', ')}];`,
    }));
  },
});

/** `<binding>.zst` in .cache/build, made once per binding (level 19 takes a few seconds). */
async function compressedBinding(file: string, name = bindingMain): Promise<string> {
  const bytes = await Bun.file(file).bytes();
  const out = join(root, '.cache', 'build', `${Bun.SHA256.hash(bytes, 'hex').slice(0, 16)}-${name}.zst`);
  if (!(await Bun.file(out).exists())) {
    await Bun.write(`${out}.tmp`, Bun.zstdCompressSync(bytes, { level: 19 }));
    await $`mv ${out}.tmp ${out}`.quiet();
  }
  return out;
}

const result = await Bun.build({
  // The GIF decoder's and the document reader's workers are entry points of their own: a
  // compiled executable carries a worker's code only when the build lists it
  // (src/images/decode-gif-in-worker.ts and src/files/extract/extract-text.ts start them).
  // cli/entry.ts: `parley sandbox` children load the sandbox alone; everything else is cli/main.ts.
  entrypoints: [join(root, 'cli/entry.ts'), join(root, 'src/images/gif-worker.ts'), join(root, 'src/files/extract/extract-worker.ts')],
  naming: { entry: '[name].[ext]' },
  // What is loaded with `await import()` at first use (the MCP SDKs, Anthropic's, Pyodide's glue)
  // goes in chunks of its own, with the Node modules it imports: in one file they were evaluated
  // at every start all the same (6 MB of idle memory, bench/RESULTS.md "Idle memory").
  splitting: true,
  compile: {
    target: `bun-linux-${arch}`,
    outfile: values.outfile!,
    ...(cross ? { executablePath: cross.bunExecutable } : {}),
  },
  minify: { syntax: true, whitespace: true },
  sourcemap: 'none',
  loader: { '.zst': 'file', '.webfile': 'file' },
  // Bytecode skips parsing ~500 modules at every start: cold start to the first answer drops to
  // about half or less (bench/RESULTS.md) for ~4.5 MB more binary. `--no-bytecode` turns it off.
  ...(values.bytecode ? { bytecode: true, format: 'esm' as const } : {}),
  define: { PARLEY_COMMIT: JSON.stringify(commit) },
  plugins,
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built ${values.outfile} (linux-${arch}, commit ${commit})`);
