// Parley's share of a compiled executable, against the floor built now (scripts/lib/binary-share.ts);
// fails above --max-mb (release.sh runs it on each release binary):
//   bun run scripts/binary-share.ts [--target bun-linux-arm64] [--max-mb 25] dist/parley
import { parseArgs } from 'node:util';
import { archOfTarget, hostArch } from './cross-deps';
import { MAX_SHARE_MB, MB, parleyShare } from './lib/binary-share';

const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), options: { target: { type: 'string' }, 'max-mb': { type: 'string', default: String(MAX_SHARE_MB) } }, allowPositionals: true });
if (positionals.length !== 1) throw new Error('usage: binary-share.ts [--target T] [--max-mb N] BINARY');
const arch = values.target ? archOfTarget(values.target) : hostArch();
const { size, floor, share } = await parleyShare(positionals[0]!, arch);
const mb = (n: number) => (n / MB).toFixed(2);
const max = Number(values['max-mb']);
console.log(`${positionals[0]}: ${mb(size)} MB, the floor (an empty program, linux-${arch}) ${mb(floor)} MB: Parley's share ${mb(share)} MB (at most ${max})`);
if (share > max * MB) {
  console.error(`binary-share: Parley's share of ${positionals[0]} is ${mb(share)} MB, past ${max} MB: see bench/RESULTS.md ("Parley's share at 25 MB") for what makes it up`);
  process.exit(1);
}
