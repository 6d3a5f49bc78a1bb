// Build the single executable:
//   bun run scripts/build.ts [--target bun-linux-x64|bun-linux-arm64] [--outfile dist/parley] [--no-bytecode] [--worker-bytecode]
// Everything Parley needs at run time (migrations, docs page, native image binding) is embedded,
// except Pyodide (the code interpreter's Python): its files go in a `pyodide` directory beside the
// executable (dist/pyodide), which install.sh and the release tarballs ship with it.
// @napi-rs/image picks its binding at run time with `require('@napi-rs/image-linux-<arch>-gnu')`;
// a plugin answers that require with the target's .node file, zstd-compressed, and a loader. For
// the host's CPU the file is the one in node_modules; for another CPU it comes from the target's
// package, fetched (with the target's Bun runtime) by scripts/cross-deps.ts.
import { $, type BunPlugin } from 'bun';
import { parseArgs } from 'node:util';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { archOfTarget, bindingPackage, fetchCrossDeps, hostArch } from './cross-deps';
import { BYTECODE_FLAGS, COMPILE_FLAGS } from './lib/binary-share';
import { bundleWeb, checkWebBudget, kb, WEB_JS_BUDGET_BYTES } from '../src/web/bundle-web';
import { PYODIDE_FILES, PYODIDE_VERSION } from '../src/code/pyodide-dir';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    target: { type: 'string' },
    outfile: { type: 'string', default: 'dist/parley' },
    bytecode: { type: 'boolean', default: true },
    // `--worker-bytecode`: the document reader's worker as an entry point with bytecode, as before
    // it was built apart (bench/extract-worker.ts measures the difference).
    'worker-bytecode': { type: 'boolean', default: false },
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
const zst = await compressed(await Bun.file(join(bindingDir, bindingMain)).bytes(), bindingMain);

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

// The document reader's worker (PDF, DOCX) is built apart, without bytecode, and embedded
// zstd-compressed in place of src/files/extract/start-extract-worker.ts's module path: with
// bytecode its 2.1 MB of JavaScript cost ~7 MB of binary, compressed it is 0.5 MB, for a read
// that parses the worker and decompresses it first (bench/RESULTS.md, "Parley's share at 25 MB").
// One Bun.build gives all its entry points bytecode or none, hence two builds.
const extractWorker = join(root, 'src/files/extract/extract-worker.ts');
if (!values['worker-bytecode']) {
  const worker = await Bun.build({
    entrypoints: [extractWorker],
    target: 'bun',
    format: 'esm',
    ...COMPILE_FLAGS,
  });
  if (!worker.success) {
    for (const log of worker.logs) console.error(log);
    process.exit(1);
  }
  // One file: the worker runs from a blob: URL, so a chunk or asset beside it would be lost.
  if (worker.outputs.length !== 1) {
    console.error(`build failed: the document reader's worker built into ${worker.outputs.length} files, not one`);
    process.exit(1);
  }
  const workerZst = await compressed(new Uint8Array(await worker.outputs[0]!.arrayBuffer()), 'extract-worker.js');
  plugins.push({
    name: 'compressed-extract-worker',
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]files[\\/]extract[\\/]start-extract-worker\.ts$/ }, () => ({
        loader: 'ts',
        // The blob: URL is given back when the worker ends (extract-text.ts ends it after each read).
        contents: `import { readFileSync } from 'node:fs';
import worker from ${JSON.stringify(workerZst)};
export function startExtractWorker(): Worker {
  const url = URL.createObjectURL(new Blob([Bun.zstdDecompressSync(readFileSync(worker))], { type: 'text/javascript' }));
  const started = new Worker(url, { smol: true });
  started.addEventListener('close', () => URL.revokeObjectURL(url));
  return started;
}`,
      }));
    },
  });
}

/** `bytes` zstd-compressed into `.cache/build/<hash>-<name>.zst`, made once per content (level 19 takes a few seconds). */
async function compressed(bytes: Uint8Array, name: string): Promise<string> {
  const out = join(root, '.cache', 'build', `${Bun.SHA256.hash(bytes, 'hex').slice(0, 16)}-${name}.zst`);
  if (!(await Bun.file(out).exists())) {
    await Bun.write(`${out}.tmp`, Bun.zstdCompressSync(bytes, { level: 19 }));
    await $`mv ${out}.tmp ${out}`.quiet();
  }
  return out;
}

const result = await Bun.build({
  // The GIF decoder's worker is an entry point of its own: a compiled executable carries a
  // worker's code only when the build lists it (src/images/decode-gif-in-worker.ts starts it), or
  // embeds it as a file (the document reader's, above).
  // cli/entry.ts: `parley sandbox` children load the sandbox alone; everything else is cli/main.ts.
  entrypoints: [join(root, 'cli/entry.ts'), join(root, 'src/images/gif-worker.ts'), ...(values['worker-bytecode'] ? [extractWorker] : [])],
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
  ...COMPILE_FLAGS,
  loader: { '.zst': 'file', '.webfile': 'file' },
  // Bytecode skips parsing ~500 modules at every start: cold start to the first answer drops to
  // about half or less (bench/RESULTS.md) for ~4.5 MB more binary. `--no-bytecode` turns it off.
  ...(values.bytecode ? BYTECODE_FLAGS : {}),
  define: { PARLEY_COMMIT: JSON.stringify(commit) },
  plugins,
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built ${values.outfile} (linux-${arch}, commit ${commit})`);

// Pyodide's core and standard library (the code interpreter, docs/code-interpreter.md), the same
// for every CPU, beside the executable where src/code/pyodide-dir.ts looks for it. Written beside
// and renamed: a server starting meanwhile never sees half a directory.
const pyodideOut = join(dirname(values.outfile!), 'pyodide');
const pyodidePart = `${pyodideOut}.${process.pid}.part`;
rmSync(pyodidePart, { recursive: true, force: true });
mkdirSync(pyodidePart, { recursive: true });
for (const name of PYODIDE_FILES) await Bun.write(join(pyodidePart, name), Bun.file(join(root, 'node_modules', 'pyodide', name)));
rmSync(pyodideOut, { recursive: true, force: true });
renameSync(pyodidePart, pyodideOut);
console.log(`wrote ${pyodideOut} (Pyodide ${PYODIDE_VERSION})`);
