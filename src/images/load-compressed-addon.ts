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
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), 'parley-addon-'));
    const file = join(dir, name);
    writeFileSync(file, Bun.zstdDecompressSync(readFileSync(embeddedPath)), { mode: 0o700 });
    const module = { exports: {} as unknown };
    process.dlopen(module, file);
    return module.exports;
  } catch (err) {
    // The package that asked for the addon swallows this error into a generic "Cannot find native
    // binding": keep the real cause for the message Parley shows (src/images/load-codec.ts).
    addonFailure.error = new Error(`could not unpack the image codec into ${tmpdir()}: ${err instanceof Error ? err.message : String(err)}`);
    throw addonFailure.error;
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** Why the embedded addon did not load, if it did not: once per process, like the load itself. */
export const addonFailure: { error?: Error } = {};
