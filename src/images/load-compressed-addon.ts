import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Load a native addon that the release binary carries zstd-compressed.
 *
 * The image codec (@napi-rs/image's native module) is 17 MB, a seventh of the executable; as
 * zstd it is 5.5 MB (bench/RESULTS.md, change 12). `scripts/build.ts` embeds the compressed
 * copy in place of the package; this decompresses it into a private temporary directory
 * (mkdtemp, mode 0700, so no other user can swap the file before it is loaded), loads it, and
 * removes the file: the loaded library stays mapped. Bun does the same with an uncompressed
 * embedded addon, minus the decompression (~40 ms, once per process, on first use).
 */
export function loadCompressedAddon(embeddedPath: string, name: string): unknown {
  const dir = mkdtempSync(join(tmpdir(), 'parley-addon-'));
  const file = join(dir, name);
  try {
    writeFileSync(file, Bun.zstdDecompressSync(readFileSync(embeddedPath)), { mode: 0o700 });
    const module = { exports: {} as unknown };
    process.dlopen(module, file);
    return module.exports;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
