import { addonFailure } from './load-compressed-addon';
import { returnLargeAllocations } from './return-large-allocations';

type Codec = typeof import('@napi-rs/image');

/**
 * The image codec, loaded on first use rather than at start: in the release binary loading it
 * means decompressing 17 MB (src/images/load-compressed-addon.ts), which a server that never
 * converts an image, and every CLI command, need not pay.
 *
 * A failed load is final for the process: the bundled package keeps the half-initialised module
 * it had when the load threw, so importing it again yields no codec (and a conversion would then
 * report every image as undecodable). Every later call fails with the real cause instead, and the
 * fix is to remove it (a full or unwritable TMPDIR, a binary for another CPU) and restart.
 */
let codec: Promise<Codec> | undefined;
export const loadCodec = (): Promise<Codec> =>
  (codec ??= import('@napi-rs/image').then(
    (mod) => {
      if (typeof mod.Transformer !== 'function') throw unloaded();
      returnLargeAllocations();
      return mod;
    },
    (err) => {
      throw addonFailure.error ? unloaded() : err;
    },
  ));

const unloaded = () =>
  new Error(`The image codec did not load: ${addonFailure.error?.message ?? 'see the first error logged'}. Fix the cause and restart Parley.`);
