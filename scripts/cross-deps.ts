// What a build for another CPU needs and the host's node_modules lacks: the Bun runtime of that
// target (embedded as the executable's base) and that target's @napi-rs/image binding (embedded as
// the .node file). Both are optional dependencies already pinned in package-lock.json (version and
// integrity); they are fetched with `npm pack` into .cache/cross/ (gitignored), checked against the
// lockfile's hash, and unpacked there, so node_modules stays untouched and a second build needs no
// network.
import { $ } from 'bun';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export type Arch = 'x64' | 'arm64';

const root = join(import.meta.dir, '..');
const cacheDir = join(root, '.cache', 'cross');

/** Version and integrity of `name` as package-lock.json pins it. */
function locked(name: string): { version: string; integrity: string } {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const entry = lock.packages?.[`node_modules/${name}`];
  if (!entry?.version || !entry?.integrity) throw new Error(`${name} is not pinned in package-lock.json`);
  return { version: entry.version, integrity: entry.integrity };
}

export const hostArch = (): Arch => (process.arch === 'arm64' ? 'arm64' : 'x64');

/** `bun-linux-arm64` → `arm64`. Only Linux glibc targets are built (Debian, Ubuntu, Raspberry Pi OS). */
export function archOfTarget(target: string): Arch {
  const m = /^bun-linux-(x64|arm64)$/.exec(target);
  if (!m) throw new Error(`unsupported target ${target}: use bun-linux-x64 or bun-linux-arm64`);
  return m[1] as Arch;
}

export const bindingPackage = (arch: Arch) => `@napi-rs/image-linux-${arch}-gnu`;
const bunPackage = (arch: Arch) => `@oven/bun-linux-${arch === 'arm64' ? 'aarch64' : 'x64'}`;

/** Unpack the locked `name` from the registry into the cache (once); return its package directory. */
async function fetchPackage(name: string): Promise<string> {
  const { version, integrity } = locked(name);
  const dir = join(cacheDir, `${name.replace('/', '+')}@${version}`);
  if (existsSync(join(dir, 'package', 'package.json'))) return join(dir, 'package');
  mkdirSync(dir, { recursive: true });
  console.log(`fetching ${name}@${version} into ${dir}`);
  const tgz = join(dir, (await $`npm pack --silent ${`${name}@${version}`} --pack-destination ${dir}`.cwd(dir).text()).trim().split('\n').pop()!);
  const [algo, want] = integrity.split('-', 2) as [string, string];
  const got = new Bun.CryptoHasher(algo as 'sha512').update(await Bun.file(tgz).arrayBuffer()).digest('base64');
  if (got !== want) {
    rmSync(tgz);
    throw new Error(`${name}@${version}: the download does not match package-lock.json's integrity`);
  }
  await $`tar xzf ${tgz} -C ${dir}`;
  return join(dir, 'package');
}

export interface CrossDeps {
  /** The target's Bun runtime, for `--compile-executable-path`. */
  bunExecutable: string;
  /** The target's binding package directory (holds package.json and the .node file). */
  bindingDir: string;
}

export async function fetchCrossDeps(arch: Arch): Promise<CrossDeps> {
  const bunDir = await fetchPackage(bunPackage(arch));
  const bindingDir = await fetchPackage(bindingPackage(arch));
  return { bunExecutable: join(bunDir, 'bin', 'bun'), bindingDir };
}
