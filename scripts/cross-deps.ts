// What a build for another CPU needs and the host's node_modules lacks: the Bun runtime of that
// target (embedded as the executable's base) and that target's @napi-rs/image binding (embedded as
// the .node file). Both come from the npm registry at the versions installed here, fetched with
// `npm pack` into .cache/cross/ (gitignored) so the shared node_modules stays untouched and a
// second build needs no network.
import { $ } from 'bun';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Arch = 'x64' | 'arm64';

const root = join(import.meta.dir, '..');
const cacheDir = join(root, '.cache', 'cross');

const installedVersion = (pkg: string): string =>
  JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version;

export const hostArch = (): Arch => (process.arch === 'arm64' ? 'arm64' : 'x64');

/** `bun-linux-arm64` → `arm64`. Only Linux glibc targets are built (Debian, Ubuntu, Raspberry Pi OS). */
export function archOfTarget(target: string): Arch {
  const m = /^bun-linux-(x64|arm64)$/.exec(target);
  if (!m) throw new Error(`unsupported target ${target}: use bun-linux-x64 or bun-linux-arm64`);
  return m[1] as Arch;
}

export const bindingPackage = (arch: Arch) => `@napi-rs/image-linux-${arch}-gnu`;
const bunPackage = (arch: Arch) => `@oven/bun-linux-${arch === 'arm64' ? 'aarch64' : 'x64'}`;

/** Unpack `name@version` from the registry into the cache (once); return its package directory. */
async function fetchPackage(name: string, version: string): Promise<string> {
  const dir = join(cacheDir, `${name.replace('/', '+')}@${version}`);
  if (existsSync(join(dir, 'package', 'package.json'))) return join(dir, 'package');
  mkdirSync(dir, { recursive: true });
  console.log(`fetching ${name}@${version} into ${dir}`);
  const tgz = (await $`npm pack --silent ${`${name}@${version}`} --pack-destination ${dir}`.cwd(dir).text()).trim().split('\n').pop()!;
  await $`tar xzf ${join(dir, tgz)} -C ${dir}`;
  return join(dir, 'package');
}

export interface CrossDeps {
  /** The target's Bun runtime, for `--compile-executable-path`. */
  bunExecutable: string;
  /** The target's binding package directory (holds package.json and the .node file). */
  bindingDir: string;
}

export async function fetchCrossDeps(arch: Arch): Promise<CrossDeps> {
  const bunDir = await fetchPackage(bunPackage(arch), installedVersion('bun'));
  const bindingDir = await fetchPackage(bindingPackage(arch), installedVersion('@napi-rs/image'));
  return { bunExecutable: join(bunDir, 'bin', 'bun'), bindingDir };
}
