// Parley's share of a compiled executable: its size less the floor, an empty program compiled
// here and now with the build's own flags (COMPILE_FLAGS) and the same target's Bun runtime, so
// the figure does not move when Bun's runtime does (bench/RESULTS.md, "Binary size, again").
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchCrossDeps, hostArch, type Arch } from '../cross-deps';

/** The most of the executable that may be Parley's own (issue 33): checked by release.sh and test/binary-share.test.ts. */
export const MAX_SHARE_MB = 25;
export const MB = 1024 * 1024;

/** What scripts/build.ts passes every build besides its entry points, plugins and bytecode. */
export const COMPILE_FLAGS = { minify: { syntax: true, whitespace: true }, sourcemap: 'none' as const };
/** With bytecode on (the default build). */
export const BYTECODE_FLAGS = { bytecode: true, format: 'esm' as const };

/** Bytes of an empty program compiled for `arch` with the build's flags (bytecode on). */
export async function floorBytes(arch: Arch = hostArch()): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-floor-'));
  try {
    const entry = join(dir, 'empty.ts');
    writeFileSync(entry, 'export {};\n');
    const cross = arch !== hostArch() ? await fetchCrossDeps(arch) : undefined;
    const outfile = join(dir, 'empty');
    const result = await Bun.build({
      entrypoints: [entry],
      compile: { target: `bun-linux-${arch}`, outfile, ...(cross ? { executablePath: cross.bunExecutable } : {}) },
      ...COMPILE_FLAGS,
      ...BYTECODE_FLAGS,
    });
    if (!result.success) throw new AggregateError(result.logs, 'the empty program did not build');
    return statSync(outfile).size;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `binary`'s size, the floor measured now, and the difference, in bytes. */
export async function parleyShare(binary: string, arch: Arch = hostArch()): Promise<{ size: number; floor: number; share: number }> {
  const floor = await floorBytes(arch);
  const size = statSync(binary).size;
  return { size, floor, share: size - floor };
}
