import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { releaseNow } from './release-now';

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
    const file = attempt('unpack', () => {
      dir = mkdtempSync(join(tmpdir(), 'parley-addon-'));
      const path = join(dir, name);
      // Both copies (22 MB) given back as soon as the file is written: left to the collector,
      // the first image decoded after the load started beside them.
      const packed = readFileSync(embeddedPath);
      const unpacked = Bun.zstdDecompressSync(packed);
      releaseNow(packed);
      writeFileSync(path, unpacked, { mode: 0o700 });
      releaseNow(unpacked);
      return path;
    });
    const module = { exports: {} as unknown };
    // Fails on a `noexec` temporary directory, or for a binary built for another CPU or C library.
    attempt('load', () => process.dlopen(module, file));
    return module.exports;
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Run one stage, keeping the real cause of a failure: the package that asks for the addon
 * swallows it into a generic "Cannot find native binding" (Parley shows it: src/images/load-codec.ts).
 */
function attempt<T>(stage: 'unpack' | 'load', run: () => T): T {
  try {
    return run();
  } catch (err) {
    const what = stage === 'unpack' ? 'unpack the image codec into' : 'load the image codec from';
    addonFailure.stage = stage;
    addonFailure.error = new Error(`could not ${what} ${tmpdir()}: ${err instanceof Error ? err.message : String(err)}`);
    throw addonFailure.error;
  }
}

/** Why the embedded addon did not load, if it did not: once per process, like the load itself. */
export const addonFailure: { stage?: 'unpack' | 'load'; error?: Error } = {};
