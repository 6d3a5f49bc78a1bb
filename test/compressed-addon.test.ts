import { expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCompressedAddon } from '../src/images/load-compressed-addon';

// What the release binary does with the image codec (scripts/build.ts embeds it compressed).
test('a zstd-compressed native addon loads, and leaves no file behind', async () => {
  const pkg = `@napi-rs/image-linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}-gnu`;
  const dir = join(import.meta.dir, '..', 'node_modules', pkg);
  const main = JSON.parse(await Bun.file(join(dir, 'package.json')).text()).main as string;
  const zst = join(mkdtempSync(join(tmpdir(), 'parley-zst-')), `${main}.zst`);
  writeFileSync(zst, Bun.zstdCompressSync(await Bun.file(join(dir, main)).bytes(), { level: 1 }));
  const before = readdirSync(tmpdir()).filter((f) => f.startsWith('parley-addon-')).length;
  const codec = loadCompressedAddon(zst, main) as typeof import('@napi-rs/image');
  const png = await codec.Transformer.fromRgbaPixels(new Uint8Array([255, 0, 0, 255]), 1, 1).png();
  const jpeg = await new codec.Transformer(png).jpeg(80);
  expect([...jpeg.subarray(0, 2)]).toEqual([0xff, 0xd8]);
  expect(readdirSync(tmpdir()).filter((f) => f.startsWith('parley-addon-')).length).toBe(before);
});
