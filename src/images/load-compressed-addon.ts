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
  // The package that asks for the addon swallows a failure into a generic "Cannot find native
  // binding": the real cause is kept for the message Parley shows (src/images/load-codec.ts).
  const failed = (stage: 'unpack' | 'load', err: unknown) => {
    const what = stage === 'unpack' ? 'unpack the image codec into' : 'load the image codec from';
    addonFailure.stage = stage;
    addonFailure.error = new Error(`could not ${what} ${tmpdir()}: ${err instanceof Error ? err.message : String(err)}`);
    return addonFailure.error;
  };
  try {
    let file: string;
    try {
      dir = mkdtempSync(join(tmpdir(), 'parley-addon-'));
      file = join(dir, name);
      writeFileSync(file, Bun.zstdDecompressSync(readFileSync(embeddedPath)), { mode: 0o700 });
    } catch (err) {
      throw failed('unpack', err);
    }
    const module = { exports: {} as unknown };
    try {
      process.dlopen(module, file);
    } catch (err) {
      // A `noexec` temporary directory, or a binary built for another CPU or C library.
      throw failed('load', err);
    }
    return module.exports;
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** Why the embedded addon did not load, if it did not: once per process, like the load itself. */
export const addonFailure: { stage?: 'unpack' | 'load'; error?: Error } = {};
