// Build the single executable:
//   bun run scripts/build.ts [--target bun-linux-x64|bun-linux-arm64] [--outfile dist/parley]
// Everything Parley needs at run time (migrations, docs page, native image binding) is embedded.
// @napi-rs/image picks its binding at run time with `require('@napi-rs/image-linux-<arch>-gnu')`;
// the bundler embeds whichever .node file that resolves to at build time. For the host's CPU that
// is the one in node_modules; for another CPU a plugin points it at the target's package, fetched
// (with the target's Bun runtime) by scripts/cross-deps.ts.
import { $, type BunPlugin } from 'bun';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { archOfTarget, bindingPackage, fetchCrossDeps, hostArch } from './cross-deps';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { target: { type: 'string' }, outfile: { type: 'string', default: 'dist/parley' } },
});

const root = join(import.meta.dir, '..');
const commit = (await $`git rev-parse --short HEAD`.cwd(root).nothrow().quiet()).stdout.toString().trim() || 'unknown';
const arch = values.target ? archOfTarget(values.target) : hostArch();
const cross = arch !== hostArch() ? await fetchCrossDeps(arch) : undefined;

const plugins: BunPlugin[] = [];
if (cross) {
  const pkg = bindingPackage(arch);
  const main = JSON.parse(await Bun.file(join(cross.bindingDir, 'package.json')).text()).main as string;
  plugins.push({
    name: 'cross-image-binding',
    setup(build) {
      const filter = new RegExp(`^${pkg.replace(/[/.]/g, '\\$&')}(/package\\.json)?$`);
      build.onResolve({ filter }, (args) => ({
        path: join(cross.bindingDir, args.path.endsWith('/package.json') ? 'package.json' : main),
      }));
    },
  });
}

const result = await Bun.build({
  entrypoints: [join(root, 'cli/main.ts')],
  compile: {
    target: `bun-linux-${arch}`,
    outfile: values.outfile!,
    ...(cross ? { executablePath: cross.bunExecutable } : {}),
  },
  minify: { syntax: true, whitespace: true },
  sourcemap: 'none',
  define: { PARLEY_COMMIT: JSON.stringify(commit) },
  plugins,
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built ${values.outfile} (linux-${arch}, commit ${commit})`);
