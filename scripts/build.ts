// Build the single executable: `bun run scripts/build.ts [--target bun-linux-arm64] [--outfile dist/parley-linux-arm64] [--no-bytecode]`.
// Everything Parley needs at run time (migrations, docs page, native image binding) is embedded.
import { $ } from 'bun';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    target: { type: 'string' },
    outfile: { type: 'string', default: 'dist/parley' },
    bytecode: { type: 'boolean', default: true },
  },
  allowNegative: true,
});

const commit = (await $`git rev-parse --short HEAD`.nothrow().quiet()).stdout.toString().trim() || 'unknown';
const args = [
  'build',
  '--compile',
  '--minify-syntax',
  '--minify-whitespace',
  '--sourcemap=none',
  // Bytecode skips parsing ~500 modules at every start: cold start to the first answer drops to
  // about a third (bench/RESULTS.md) for ~4 MB more binary. `--no-bytecode` turns it off.
  ...(values.bytecode ? ['--bytecode', '--format=esm'] : []),
  `--define`,
  `PARLEY_COMMIT=${JSON.stringify(commit)}`,
  ...(values.target ? [`--target=${values.target}`] : []),
  'cli/main.ts',
  '--outfile',
  values.outfile!,
];
const proc = Bun.spawnSync([process.execPath, ...args], { stdout: 'inherit', stderr: 'inherit' });
if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
console.log(`built ${values.outfile} (commit ${commit})`);
