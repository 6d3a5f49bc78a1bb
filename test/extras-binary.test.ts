import { describe, expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transformer } from '@napi-rs/image';
import { sharedFakeExpo } from './fakes/expo';
import { waitForListening } from '../scripts/lib/wait-for-listening';

const root = new URL('..', import.meta.url).pathname;

async function run(cmd: string[], env: Record<string, string>) {
  const p = Bun.spawn(cmd, { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

// The native image binding and expo-server-sdk both load things at run time (a .node file, the
// SDK's own package.json); this checks they work from inside the single executable.
describe('the compiled binary: image conversion, push and files', () => {
  test('convertImage (native binding and GIF), a test push and a file upload work from the executable', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'parley-bin-extras-')), 'parley');
    const build = await run([process.execPath, 'run', join(root, 'scripts/build.ts'), '--outfile', out], {});
    expect(build.code).toBe(0);
    const fake = sharedFakeExpo();
    fake.reset();
    const env = {
      PARLEY_DATA_DIR: join(out, '..', 'data'),
      PARLEY_EXPO_BASE_URL: fake.url,
      PARLEY_PUSH_RECEIPT_DELAY_MS: '0',
      PARLEY_INTERNAL_EMAIL_DOMAIN: 'parley.test',
    };
    expect((await run([out, 'user', 'create', '--email', 'dev@parley.test'], env)).code).toBe(0);
    const { key } = JSON.parse((await run([out, 'apikey', 'create', '--email', 'dev@parley.test', '--json'], env)).out);
    const proc = Bun.spawn([out, 'serve', '--port', '0'], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
    try {
      const url = await waitForListening(proc);
      const call = async (path: string, body: unknown) =>
        (await fetch(`${url}/api/${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
      const png = await Transformer.fromRgbaPixels(new Uint8Array(4 * 4 * 4).fill(200), 4, 4).png();
      const converted = await call('images/convertImage', { dataUrl: `data:image/png;base64,${Buffer.from(png).toString('base64')}` });
      expect(converted.success).toBe(true);
      expect(converted.originalFormat).toBe('png');
      const gif = await call('images/convertImage', { dataUrl: 'data:image/gif;base64,R0lGODlhAQABAIAAAP8AAAAAACH5BAAAAAAALAAAAAABAAEAAAICRAEAOw==' });
      expect(gif).toMatchObject({ success: true, originalFormat: 'gif' });
      expect((await call('notifications/registerPushToken', { token: 'ExponentPushToken[ok-bin]', platform: 'ios' })).success).toBe(true);
      const report = await call('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'completed' });
      expect(report).toEqual({ ok: true, tokenCount: 1, sent: 1, invalidTokens: 0, errors: 0, receiptIdsRequested: 1, receiptsMissing: 0 });
      expect(fake.delivered.map((m) => m.to)).toEqual(['ExponentPushToken[ok-bin]']);

      // Files: the multipart parser, the codec's re-encode and thumbnail, and the data directory's storage.
      const form = new FormData();
      form.append('file', new Blob([Transformer.fromRgbaPixels(new Uint8Array(300 * 200 * 4).fill(120), 300, 200).jpegSync(90)]), 'photo.jpg');
      const uploaded = (await (await fetch(`${url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form })).json()) as any;
      expect(uploaded).toMatchObject({ mimeType: 'image/jpeg', kind: 'image', width: 300, height: 200 });
      const range = await fetch(`${url}${uploaded.contentUrl}`, { headers: { 'x-api-key': key, range: 'bytes=0-1' } });
      expect(range.status).toBe(206);
      expect([...new Uint8Array(await range.arrayBuffer())]).toEqual([0xff, 0xd8]);
      const thumb = await fetch(`${url}${uploaded.thumbnailUrl}`, { headers: { 'x-api-key': key } });
      expect((await new Transformer(new Uint8Array(await thumb.arrayBuffer())).metadata()).width).toBe(256);
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
  }, 120_000);
});
