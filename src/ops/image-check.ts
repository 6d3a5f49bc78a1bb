import type { Check } from './checks';
import { loadCodec } from '../images/load-codec';
import { addonFailure } from '../images/load-compressed-addon';

/**
 * Encode a tiny image to PNG, decode it and re-encode it as JPEG, in-process. This proves the
 * native @napi-rs/image binding embedded in the executable loads on this machine's CPU and libc
 * (the one thing a cross-built binary cannot prove at build time).
 */
export async function checkImageCodec(): Promise<Check> {
  const name = 'image codec';
  try {
    // Loaded here, not at the top: every CLI command would otherwise pay for loading the codec.
    const { Transformer } = await loadCodec();
    const rgba = new Uint8Array(4 * 4 * 4).fill(200);
    const png = await Transformer.fromRgbaPixels(rgba, 4, 4).png();
    const jpeg = await new Transformer(png).jpeg(80);
    if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new Error('the JPEG encoder returned something that is not a JPEG');
    return { name, status: 'ok', detail: `PNG → JPEG in-process (linux-${process.arch})` };
  } catch (err) {
    return {
      name,
      status: 'fail',
      detail: String((err as Error).message ?? err).split('\n')[0]!,
      fix:
        addonFailure.stage === 'unpack'
          ? 'give Parley a writable temporary directory with 20 MB free (TMPDIR, default /tmp)'
          : addonFailure.stage === 'load'
            ? `if TMPDIR (default /tmp) is mounted noexec, point TMPDIR at a directory that allows running code; otherwise use the binary built for this CPU (linux-${process.arch})`
            : `use the binary built for this CPU (linux-${process.arch}); image conversion cannot work without it`,
    };
  }
}
