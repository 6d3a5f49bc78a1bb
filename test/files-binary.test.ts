/**
 * Files through the compiled binary, as a person's client would use them: upload (multipart),
 * list, metadata, download with Range, thumbnail, a document read into searchable text by the
 * worker inside the executable, quotas, the refusals with their envelopes, deletion, and the
 * server's memory after a hostile document. Both stores (PARLEY_TEST_STORE=pg runs it on
 * PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Transformer } from '@napi-rs/image';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { memoryOf, startBinaryServer, type BinaryServer } from './support/binary-server';
import { makeStreamBombPdf } from './fixtures/documents';

setDefaultTimeout(120_000);

let server: BinaryServer;
beforeAll(async () => {
  server = await startBinaryServer({ PARLEY_FILES_MAX_BYTES: String(2 * 1024 * 1024), PARLEY_FILES_MAX_PER_USER: '6' });
});
afterAll(() => server?.stop());

const upload = (bytes: Uint8Array | string, filename: string, key = server.key) => {
  const form = new FormData();
  form.append('file', new Blob([bytes]), filename);
  return fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
};
const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers: { 'x-api-key': server.key, ...headers } });
const json = async (res: Response) => (await res.json()) as any;

describe('files through the compiled binary', () => {
  test('upload, list, metadata, Range, thumbnail; a PDF read and searchable; refusals with the envelope; quotas; delete', async () => {
    const photo = Transformer.fromRgbaPixels(new Uint8Array(640 * 480 * 4).fill(90), 640, 480).jpegSync(85);
    const image = await json(await upload(photo, 'photo.jpg'));
    expect(image).toMatchObject({ kind: 'image', mimeType: 'image/jpeg', width: 640, height: 480 });

    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    pdf.addPage().drawText('The binary read this sentence about heliotropes.', { x: 40, y: 700, size: 12, font });
    const doc = await json(await upload(await pdf.save(), 'flowers.pdf'));
    expect(doc).toMatchObject({ kind: 'document', mimeType: 'application/pdf', textStatus: 'pending' });
    // The document reader's worker runs inside the executable.
    let ready: any;
    for (let i = 0; i < 100 && ready?.textStatus !== 'ready'; i++) {
      ready = await json(await server.post('files/getFile', { fileId: doc.id }));
      if (ready.textStatus === 'failed') throw new Error(ready.textError);
      await Bun.sleep(100);
    }
    expect(ready.textStatus).toBe('ready');
    const hits = (await json(await server.post('files/searchFiles', { query: 'heliotropes' }))).hits;
    expect(hits.map((h: any) => h.fileId)).toEqual([doc.id]);

    const listed = await json(await server.post('files/listFiles', {}));
    expect(listed.files.map((f: any) => f.id)).toEqual([doc.id, image.id]);
    const range = await get(doc.contentUrl, { range: 'bytes=0-4' });
    expect(range.status).toBe(206);
    expect(await range.text()).toBe('%PDF-');
    const thumb = await get(image.thumbnailUrl);
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    expect((await new Transformer(new Uint8Array(await thumb.arrayBuffer())).metadata()).width).toBe(256);

    // Refusals, each with the envelope.
    const envelope = async (res: Response, status: number, code: string) => {
      expect(res.status).toBe(status);
      const body = await json(res);
      expect(Object.keys(body).sort()).toEqual(['code', 'data', 'defined', 'message', 'status']);
      expect(body.code).toBe(code);
    };
    await envelope(await upload(new Uint8Array(3 * 1024 * 1024).fill(65), 'big.txt'), 413, 'PAYLOAD_TOO_LARGE');
    await envelope(await upload(new Uint8Array([0, 1, 2, 0, 9, 9, 0, 7]), 'x.bin'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await envelope(await fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': server.key, 'content-type': 'application/json' }, body: '{}' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await envelope(await upload('no key', 'a.txt', 'wrong-key'), 401, 'UNAUTHORIZED');
    await envelope(await get(`/api/files/${doc.id}/content`, { 'x-api-key': 'wrong-key' }), 401, 'UNAUTHORIZED');
    await envelope(await get('/api/files/00000000-0000-0000-0000-000000000000/content'), 404, 'NOT_FOUND');
    await envelope(await get(doc.contentUrl, { range: 'bytes=999999-' }), 416, 'RANGE_NOT_SATISFIABLE');
    // The count quota (6): four more fit, the fifth is refused.
    for (let i = 0; i < 4; i++) expect((await upload(`note ${i}`, `n${i}.txt`)).status).toBe(200);
    const over = await upload('one too many', 'n5.txt');
    expect(over.status).toBe(409);
    expect((await json(over)).data).toEqual({ reason: 'quota' });

    expect(await json(await server.post('files/deleteFile', { fileId: image.id }))).toEqual({ success: true });
    expect((await get(image.contentUrl)).status).toBe(404);
    expect((await upload('room again', 'n6.txt')).status).toBe(200);
  });

  test('a hostile document (a PDF whose stream inflates to 1 GB) fails with a reason, and the server stays small', async () => {
    const bomb = await makeStreamBombPdf(1024);
    // Room for one more under the count quota the first test filled.
    const [oldest] = (await json(await server.post('files/listFiles', {}))).files.slice(-1);
    await server.post('files/deleteFile', { fileId: oldest.id });
    const file = await json(await upload(bomb, 'bomb.pdf'));
    let seen: any;
    for (let i = 0; i < 100 && (!seen || seen.textStatus === 'pending'); i++) {
      seen = await json(await server.post('files/getFile', { fileId: file.id }));
      await Bun.sleep(100);
    }
    expect(seen.textStatus).toBe('failed');
    expect(seen.textError.length).toBeGreaterThan(10);
    expect(memoryOf(server.pid).hwm).toBeLessThan(300);
  });
});
