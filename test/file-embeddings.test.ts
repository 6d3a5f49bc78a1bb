/**
 * Semantic search of documents through HTTP on a real database (either store), against a local
 * OpenAI-compatible embeddings server (test/fakes/openai-embeddings.ts): chunks embedded after
 * their text is read, in batches, stored as unit float32 vectors with their model; searches by
 * meaning that full-text search cannot answer, fused with it by default; who may read what; the
 * server off, failing, refusing a text or ignoring `encoding_format`; the pass that fills missing
 * and stale vectors; the search_files tool.
 */
import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { captureLog, createTestContext, type TestContext, type TestUser } from './helpers';
import { readFrames } from './sse';
import { fakeEmbedding, startFakeEmbeddings } from './fakes/openai-embeddings';
import { startFakeOpenAI } from './fakes/openai';
import { codeWords, decodeVector, encodeSignBits, normaliseVector, type StoredVector } from '../src/files/embeddings-vectors';
import { codesBytes, createEmbeddingsIndex } from '../src/files/embeddings-index';
import { NearestCodes } from '../src/files/embeddings-nearest';
import { MAX_CHUNKS, MAX_WORDS, releaseHammingKernel, takeHammingKernel } from '../src/files/hamming-wasm';
import { CHECK_EVERY_MS, PROBE_TEXT } from '../src/files/embeddings-model';
import { updateUser } from '../src/account/account.store';
import type { Config } from '../src/config';
import type { AppDeps } from '../src/deps';
import type { Logger } from '../src/log';

setDefaultTimeout(30_000);

const embeddings = startFakeEmbeddings();
const openai = startFakeOpenAI();
const dirs: string[] = [];
afterAll(() => {
  embeddings.stop();
  openai.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

beforeEach(() => {
  embeddings.requests.length = 0;
  embeddings.fail = () => undefined;
  embeddings.ignoreEncodingFormat = false;
  embeddings.maxInputChars = 32_000;
  embeddings.weights = 0;
});

const KEY = 'sk-embed-secret-123';
const on = (extra: Partial<Config> = {}): Partial<Config> => ({ embeddingsBaseUrl: embeddings.url, embeddingsApiKey: KEY, embeddingsModel: 'fake-embed', ...extra });

async function setup(config: Partial<Config> = on(), extra: { deps?: Partial<AppDeps>; log?: Logger; now?: () => number } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-embeddings-'));
  dirs.push(dataDir);
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config: { dataDir, ...config }, ...extra });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob, dataDir };
}

async function upload(ctx: TestContext, as: TestUser, text: string, filename: string): Promise<any> {
  const form = new FormData();
  form.append('file', new Blob([text]), filename);
  const res = await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': as.key }, body: form }));
  expect(res.status).toBe(200);
  return res.json();
}

type ChunkRow = { file_id: string; seq: number; embedding: StoredVector | null; embedding_model: string | null; content: string };
const chunksOf = async (ctx: TestContext, fileId?: string) =>
  (await ctx.query<ChunkRow>(sql`SELECT file_id, seq, embedding, embedding_model, content FROM file_chunks ORDER BY file_id, seq`)).filter((r) => !fileId || r.file_id === fileId);

const search = (ctx: TestContext, as: TestUser, query: string, mode?: string) => ctx.json('files/searchFiles', { query, ...(mode ? { mode } : {}) }, as);
const idsOf = (body: any): string[] => body.hits.map((h: any) => h.fileId);

/** A text of several chunks (about 2,000 characters each): paragraphs of distinct words. */
const longText = (topic: string, paragraphs = 6) =>
  Array.from({ length: paragraphs }, (_, i) => `Section ${i} about ${topic}. ` + Array.from({ length: 200 }, (_, j) => `word${i}x${j}`).join(' ') + '.').join('\n\n');

const PHYSICIAN = 'Our physician reviewed the invoices from last spring.';
const GARDEN = 'The garden needs water every evening in summer.';

describe('embedding documents', () => {
  test('chunks are embedded after their text is read: in batches, with the key, as unit float32 vectors in base64 labelled with their model', async () => {
    const { ctx, ann } = await setup(on({ embeddingsBatch: 2 }));
    const file = await upload(ctx, ann, longText('lighthouses'), 'long.txt');
    await ctx.deps.fileText.idle();
    const chunks = await chunksOf(ctx, file.id);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(embeddings.requests.length).toBe(Math.ceil(chunks.length / 2));
    for (const [i, r] of embeddings.requests.entries()) {
      expect(r).toMatchObject({ model: 'fake-embed', encodingFormat: 'base64', authorization: `Bearer ${KEY}` });
      // The process's first request carries the probe text too: the model's fingerprint.
      expect(r.input.filter((text) => text !== PROBE_TEXT).length).toBeLessThanOrEqual(2);
      expect(r.input.includes(PROBE_TEXT)).toBe(i === 0);
      expect(r.dimensions).toBeUndefined();
    }
    for (const c of chunks) {
      expect(c.embedding_model).toBe('fake-embed');
      const v = decodeVector(c.embedding!);
      expect(v.length).toBe(256);
      expect(Math.hypot(...v)).toBeCloseTo(1, 5);
      // The very vector the server made of this chunk's text, scaled.
      expect([...v]).toEqual([...normaliseVector(fakeEmbedding(c.content, 256))]);
    }
  });

  test('a server that ignores encoding_format and answers numbers is read as well (the same vectors)', async () => {
    const { ctx, ann } = await setup();
    const a = await upload(ctx, ann, PHYSICIAN, 'a.txt');
    await ctx.deps.fileText.idle();
    embeddings.ignoreEncodingFormat = true;
    const b = await upload(ctx, ann, PHYSICIAN, 'b.txt');
    await ctx.deps.fileText.idle();
    const [ca] = await chunksOf(ctx, a.id);
    const [cb] = await chunksOf(ctx, b.id);
    // Equal bytes (base64 text on SQLite, bytea on PostgreSQL).
    expect(cb!.embedding).toEqual(ca!.embedding);
  });

  test('PARLEY_EMBEDDINGS_DIMENSIONS is asked for, and labels the vectors', async () => {
    const { ctx, ann } = await setup(on({ embeddingsDimensions: 64 }));
    const file = await upload(ctx, ann, PHYSICIAN, 'a.txt');
    await ctx.deps.fileText.idle();
    expect(embeddings.requests[0]!.dimensions).toBe(64);
    const [chunk] = await chunksOf(ctx, file.id);
    expect(chunk!.embedding_model).toBe('fake-embed#64');
    expect(decodeVector(chunk!.embedding!).length).toBe(64);
    const found = await search(ctx, ann, 'doctor', 'semantic');
    expect(idsOf(found.body)).toEqual([file.id]);
  });

  test('embeddings off: nothing is sent, no vectors; search is by words, semantic is 503 naming the setting', async () => {
    const { ctx, ann } = await setup({});
    const file = await upload(ctx, ann, PHYSICIAN, 'a.txt');
    await ctx.deps.fileText.idle();
    expect(embeddings.requests).toEqual([]);
    expect((await chunksOf(ctx, file.id))[0]).toMatchObject({ embedding: null, embedding_model: null });
    const byDefault = await search(ctx, ann, 'physician');
    expect(byDefault.body).toMatchObject({ mode: 'text', hits: [{ fileId: file.id }] });
    // Hybrid asked of a server without embeddings answers by words, and says so.
    expect((await search(ctx, ann, 'physician', 'hybrid')).body.mode).toBe('text');
    const semantic = await search(ctx, ann, 'physician', 'semantic');
    expect(semantic.status).toBe(503);
    expect(semantic.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(semantic.body.message).toContain('PARLEY_EMBEDDINGS_BASE_URL');
  });
});

describe('semantic search', () => {
  test('finds by meaning what full-text misses; hybrid fuses both; only documents the caller may read', async () => {
    const { ctx, ann, bob } = await setup();
    const physician = await upload(ctx, ann, PHYSICIAN, 'visit.txt');
    const garden = await upload(ctx, ann, GARDEN, 'garden.txt');
    const theirs = await upload(ctx, bob, "Bob's physician also sent invoices.", 'bob.txt');
    await ctx.deps.fileText.idle();

    // Neither word is in the text: a synonym and another form of a word.
    expect((await search(ctx, ann, 'doctor invoicing', 'text')).body).toEqual({ mode: 'text', hits: [] });
    const semantic = await search(ctx, ann, 'doctor invoicing', 'semantic');
    expect(semantic.status).toBe(200);
    expect(semantic.body.mode).toBe('semantic');
    expect(semantic.body.hits).toEqual([{ fileId: physician.id, filename: 'visit.txt', page: null, excerpt: PHYSICIAN }]);
    // The default, with embeddings on, is hybrid.
    const hybrid = await search(ctx, ann, 'doctor invoicing');
    expect(hybrid.body.mode).toBe('hybrid');
    expect(idsOf(hybrid.body)).toEqual([physician.id]);

    // Found by both lists ranks above found by one: "summer" is a word of the garden note, "doctor" means the physician.
    expect(idsOf((await search(ctx, ann, 'doctor summer', 'text')).body)).toEqual([garden.id]);
    expect(idsOf((await search(ctx, ann, 'doctor summer', 'semantic')).body).sort()).toEqual([physician.id, garden.id].sort());
    const both = await search(ctx, ann, 'summer evening doctor', 'hybrid');
    expect(idsOf(both.body)).toEqual([garden.id, physician.id]);

    // Bob's vectors are never compared with Ann's query, nor Ann's with his.
    for (const mode of ['semantic', 'hybrid'] as const) expect(idsOf((await search(ctx, ann, 'physician invoices', mode)).body)).not.toContain(theirs.id);
    expect(idsOf((await search(ctx, bob, 'doctor invoicing', 'semantic')).body)).toEqual([theirs.id]);
    // Chunks sharing nothing with the query are left out, even by meaning.
    expect((await search(ctx, ann, 'zeppelin', 'semantic')).body.hits).toEqual([]);
    // A deleted file's vectors go with it.
    await ctx.json('files/deleteFile', { fileId: physician.id }, ann);
    expect((await search(ctx, ann, 'doctor invoicing', 'semantic')).body.hits).toEqual([]);
  });

  test('the best of many chunks, read in several pages: small files together, a large one in ranges; the limit', async () => {
    // Long vectors make short pages: 100 chunks (the least a page holds) at 8,192 dimensions.
    const { ctx, ann } = await setup(on({ embeddingsBatch: 64, embeddingsDimensions: 8192 }));
    const small = [await upload(ctx, ann, longText('tides', 20), 'a.txt'), await upload(ctx, ann, longText('moss', 20), 'b.txt')];
    const big = await upload(ctx, ann, `${longText('engines', 130)}\n\nThe automobile stalled near the old lighthouse.`, 'big.txt');
    await ctx.deps.fileText.idle();
    const bigChunks = await chunksOf(ctx, big.id);
    expect(bigChunks.length).toBeGreaterThan(100);
    // Only the big file's last chunk speaks of a car, past its first range of 100.
    const found = await ctx.json('files/searchFiles', { query: 'car', mode: 'semantic', limit: 5 }, ann);
    expect(found.body.hits).toEqual([expect.objectContaining({ fileId: big.id, excerpt: bigChunks.at(-1)!.content.slice(0, 500) })]);
    const words = await ctx.json('files/searchFiles', { query: 'word3x7 word3x8', mode: 'semantic', limit: 3 }, ann);
    expect(words.body.hits.length).toBe(3);
    for (const id of idsOf(words.body)) expect([...small, big].map((f) => f.id)).toContain(id);
  });

  test('refusals: a mode it does not know, a bad limit, no credential', async () => {
    const { ctx, ann } = await setup();
    const bad = await ctx.json('files/searchFiles', { query: 'x', mode: 'fuzzy' }, ann);
    expect(bad.status).toBe(400);
    expect(bad.body.data.issues[0].path).toEqual(['mode']);
    expect((await ctx.json('files/searchFiles', { query: 'x', limit: 0 }, ann)).status).toBe(400);
    expect((await ctx.json('files/searchFiles', { query: 'x', mode: 'semantic' })).status).toBe(401);
  });
});

describe('the index of sign bits kept between searches', () => {
  /** The exact ranking, computed here from the stored vectors: what every search must answer. */
  async function exactRanking(ctx: TestContext, as: TestUser, query: string, limit: number, dims = 256): Promise<string[]> {
    const q = normaliseVector(fakeEmbedding(query, dims));
    const rows = await ctx.query<ChunkRow & { user_id: string }>(
      sql`SELECT c.file_id, c.seq, c.embedding, c.embedding_model, c.content, f.user_id FROM file_chunks c JOIN files f ON f.id = c.file_id WHERE f.user_id = ${as.user.id} AND c.embedding IS NOT NULL`,
    );
    return rows
      .map((r) => ({ key: `${r.file_id}:${r.content.slice(0, 500)}`, score: decodeVector(r.embedding!).reduce((sum, x, i) => sum + x * q[i]!, 0) }))
      .filter((r) => r.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map((r) => r.key);
  }
  const keysOf = (body: any): string[] => body.hits.map((h: any) => `${h.fileId}:${h.excerpt}`);
  const TOPICS = ['tides and harbours', 'moss on stones', 'engines and cars', 'invoices from the doctor', 'orchards in spring'];

  test("the first search (every code read from the database) and the next ones (the codes held, then the candidates' vectors) answer the exact ranking's top k", async () => {
    const { ctx, ann, bob } = await setup();
    for (const [i, topic] of TOPICS.entries()) await upload(ctx, ann, longText(topic, 4 + i), `${i}.txt`);
    await upload(ctx, bob, longText('engines and cars', 5), 'bob.txt');
    await ctx.deps.fileText.idle();
    expect(ctx.deps.embeddingsIndex.bytes()).toBe(0);
    for (const query of ['car engines', 'doctor invoices spring', 'stones word1x3 word2x9', 'harbour tide word0x1']) {
      const exact = await exactRanking(ctx, ann, query, 5);
      expect(exact.length).toBe(5);
      for (let round = 0; round < 2; round++) {
        const found = await ctx.json('files/searchFiles', { query, mode: 'semantic', limit: 5 }, ann);
        expect(keysOf(found.body)).toEqual(exact);
      }
    }
    // The codes are held now (Ann's five documents; Bob's were never searched).
    expect(ctx.deps.embeddingsIndex.bytes()).toBeGreaterThan(0);
  });

  test('codes of any length: an odd number of words (counted 32 bits at a time) and codes too long for the WebAssembly kernel (counted in JavaScript) answer the exact ranking', async () => {
    // 96 dimensions: 3 words a code; 4,400: 138 words, over the kernel's 134.
    for (const dims of [96, 4400]) {
      const { ctx, ann } = await setup(on({ embeddingsDimensions: dims }));
      for (const [i, topic] of TOPICS.entries()) await upload(ctx, ann, longText(topic, 3), `${i}.txt`);
      await ctx.deps.fileText.idle();
      for (const query of ['car engines', 'doctor invoices spring']) {
        const exact = await exactRanking(ctx, ann, query, 5, dims);
        // By text, in any order: the documents share paragraphs, and in so few dimensions chunks
        // that differ only in words the query lacks score exactly alike.
        const texts = (keys: string[]) => keys.map((k) => k.slice(k.indexOf(':') + 1)).sort();
        for (let round = 0; round < 2; round++)
          expect({ dims, found: texts(keysOf((await ctx.json('files/searchFiles', { query, mode: 'semantic', limit: 5 }, ann)).body)) }).toEqual({ dims, found: texts(exact) });
      }
    }
  });

  test('with no room for the index (PARLEY_EMBEDDINGS_INDEX_MB=0) every search reads every code from the database, and answers the same', async () => {
    const { ctx, ann } = await setup(on({ embeddingsIndexMb: 0 }));
    for (const [i, topic] of TOPICS.entries()) await upload(ctx, ann, longText(topic, 3), `${i}.txt`);
    await ctx.deps.fileText.idle();
    for (let round = 0; round < 2; round++) {
      const found = await ctx.json('files/searchFiles', { query: 'car engines', mode: 'semantic', limit: 4 }, ann);
      expect(keysOf(found.body)).toEqual(await exactRanking(ctx, ann, 'car engines', 4));
    }
    expect(ctx.deps.embeddingsIndex.bytes()).toBe(0);
  });

  test('each vector is stored with its sign bits; vectors stored before codes were (an upgrade) are searched by their floats until the background pass codes them', async () => {
    const { ctx, ann } = await setup();
    for (const [i, topic] of TOPICS.entries()) await upload(ctx, ann, longText(topic, 3), `${i}.txt`);
    await ctx.deps.fileText.idle();
    type Coded = { id: string; embedding: StoredVector; embedding_code: string | null };
    const coded = () => ctx.query<Coded>(sql`SELECT id, embedding, embedding_code FROM file_chunks WHERE embedding IS NOT NULL ORDER BY id`);
    const stored = await coded();
    expect(stored.length).toBe((await chunksOf(ctx)).length);
    for (const row of stored) expect(row.embedding_code).toBe(encodeSignBits(decodeVector(row.embedding)));
    // 256 dimensions: 8 words of 32 bits, 32 bytes in base64.
    expect(stored[0]!.embedding_code!.length).toBe(44);

    // A database from before codes: the vectors are there, their codes not.
    await ctx.query(sql`UPDATE file_chunks SET embedding_code = NULL`);
    const before = await createTestContext({ sameDatabaseAs: ctx, config: ctx.deps.config });
    for (const query of ['car engines', 'doctor invoices spring']) {
      const exact = await exactRanking(before, ann, query, 5);
      for (let round = 0; round < 2; round++) expect(keysOf((await before.json('files/searchFiles', { query, mode: 'semantic', limit: 5 }, ann)).body)).toEqual(exact);
    }
    // The pass that runs at every wake-up (a start, an upload) codes them, from the floats alone.
    const sent = embeddings.requests.length;
    before.deps.fileText.wake();
    await before.deps.fileText.idle();
    expect(embeddings.requests.length).toBe(sent);
    expect(await coded()).toEqual(stored);
    // Another process (a restart) builds its index from the codes, and answers the same.
    const after = await createTestContext({ sameDatabaseAs: ctx, config: ctx.deps.config });
    for (const query of ['car engines', 'doctor invoices spring'])
      expect(keysOf((await after.json('files/searchFiles', { query, mode: 'semantic', limit: 5 }, ann)).body)).toEqual(await exactRanking(after, ann, query, 5));
  });

  test('over PARLEY_EMBEDDINGS_INDEX_MB: documents that do not fit are read from the database at every search (their codes), the same answers; logged once, shown by the doctor', async () => {
    // Room for one document of four chunks (256 dimensions), not for two, nor for one of fourteen.
    const cap = codesBytes('x'.repeat(36), 4, 256) + 100;
    const { log, lines } = captureLog();
    const { ctx, ann } = await setup(on(), { deps: { embeddingsIndex: createEmbeddingsIndex(cap) }, log });
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { isAdmin: true }, Date.now()));
    for (const [i, topic] of TOPICS.slice(0, 3).entries()) await upload(ctx, ann, longText(topic, 3), `${i}.txt`);
    await upload(ctx, ann, longText('orchards in spring', 12), 'big.txt');
    await ctx.deps.fileText.idle();
    const full = () => lines.filter((l) => l.includes('the semantic search index is full'));
    for (const query of ['car engines', 'orchards spring word7x3', 'stones moss']) {
      const exact = await exactRanking(ctx, ann, query, 4);
      for (let round = 0; round < 2; round++) expect(keysOf((await ctx.json('files/searchFiles', { query, mode: 'semantic', limit: 4 }, ann)).body)).toEqual(exact);
    }
    const chunks = (await chunksOf(ctx)).length;
    expect(chunks).toBe(4 * 3 + 14);
    const state = ctx.deps.embeddingsIndex.state();
    expect(state).toEqual(expect.objectContaining({ documents: 1, chunks: 4 }));
    expect(state.bytes).toBeLessThanOrEqual(cap);
    expect(state.over).toEqual(expect.objectContaining({ documents: 3, chunks: chunks - 4 }));
    // Once a process, with what it would take.
    expect(full().length).toBe(1);
    expect(JSON.parse(full()[0]!)).toEqual(expect.objectContaining({ level: 'warn', documents: 3, chunks: chunks - 4, capMb: 0, neededMb: 1 }));
    const doctor = await ctx.json('admin/doctor', {}, ann);
    expect(doctor.body.checks).toContainEqual({
      name: 'semantic search index',
      status: 'warn',
      detail: expect.stringMatching(/^full: 0\.0 MB of 0\.0 MB hold 1 documents \(4 chunks\); a search at \S+ read 3 documents \(22 chunks\) from the database that did not fit/),
      fix: 'raise PARLEY_EMBEDDINGS_INDEX_MB to at least 1 (what that search needed), memory permitting',
    });
  });

  test("the WebAssembly kernel counts each code's distance to the query exactly: 32 bits at a time for an odd number of words, 64 for an even one", () => {
    const kernel = takeHammingKernel();
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) | 0);
    for (const words of [1, 3, 12, 48, MAX_WORDS]) {
      const n = MAX_CHUNKS;
      const codes = Int32Array.from({ length: n * words }, next);
      const query = Int32Array.from({ length: words }, next);
      kernel.query.set(query);
      kernel.codes.set(codes);
      kernel.distances(n, words);
      const naive = (c: number) => {
        let h = 0;
        for (let w = 0; w < words; w++) for (let x = (codes[c * words + w]! ^ query[w]!) >>> 0; x; x >>>= 1) h += x & 1;
        return h;
      };
      const wrong = Array.from({ length: n }, (_, c) => c).filter((c) => kernel.out[c] !== naive(c));
      expect({ words, wrong: wrong.length }).toEqual({ words, wrong: 0 });
    }
    releaseHammingKernel(kernel);
  });

  test('a long comparison gives the thread up every few milliseconds, and finds the same candidates', async () => {
    const dims = 384;
    const words = codeWords(dims);
    const chunks = 20_000;
    const codes = new Int32Array(chunks * words);
    for (let i = 0; i < codes.length; i++) codes[i] = (Math.imul(i + 1, 2654435761) ^ (i >>> 3)) | 0;
    const seqs = Int32Array.from({ length: chunks }, (_, i) => i);
    const query = normaliseVector(Float32Array.from({ length: dims }, (_, i) => Math.sin(i * 7.3)));
    const at = async (sliceMs: number) => {
      let others = 0;
      const tick = () => {
        others++;
        if (others < 1000) setImmediate(tick);
      };
      setImmediate(tick);
      const nearest = new NearestCodes(query, 50, sliceMs);
      await nearest.add('doc', codes, seqs);
      return { others, best: nearest.best() };
    };
    const held = await at(Number.POSITIVE_INFINITY);
    const sliced = await at(0);
    // Held throughout, nothing else ran; given up after every slice of chunks, others ran between.
    expect(held.others).toBe(0);
    expect(sliced.others).toBeGreaterThanOrEqual(Math.floor(chunks / 4096));
    expect(sliced.best).toEqual(held.best);
    expect(held.best.length).toBe(50);
  });

  test('another instance adds, re-reads and deletes documents: the codes this one kept never answer for them', async () => {
    const { ctx: one, ann, bob, dataDir } = await setup();
    const two = await createTestContext({ sameDatabaseAs: one, config: { dataDir, ...on() } });
    const engines = await upload(one, ann, longText('engines and cars', 3), 'engines.txt');
    const moss = await upload(one, ann, longText('moss on stones', 3), 'moss.txt');
    await one.deps.fileText.idle();
    // Instance one keeps the codes of both documents.
    expect(idsOf((await search(one, ann, 'car engines', 'semantic')).body)[0]).toBe(engines.id);
    expect(idsOf((await search(one, ann, 'car engines', 'semantic')).body)[0]).toBe(engines.id);

    // Instance two: a new document about cars, Ann's engines deleted, a document of Bob's.
    const cars = await upload(two, ann, 'The automobile and its engine: cars, cars, cars.', 'cars.txt');
    const bobs = await upload(two, bob, 'Car engines of every kind.', 'bob.txt');
    await two.deps.fileText.idle();
    expect((await two.json('files/deleteFile', { fileId: engines.id }, ann)).status).toBe(200);
    const found = idsOf((await search(one, ann, 'car engines', 'semantic')).body);
    expect(found[0]).toBe(cars.id);
    expect(found).not.toContain(engines.id);
    expect(found).not.toContain(bobs.id);
    expect(keysOf((await one.json('files/searchFiles', { query: 'car engines', mode: 'semantic', limit: 5 }, ann)).body)).toEqual(await exactRanking(one, ann, 'car engines', 5));

    // A document whose vectors another instance fills later: this one held it without codes, and reads them once they change.
    embeddings.fail = (r) => (r.input.some((text) => text.startsWith('Section')) ? { fail: 500 } : undefined);
    const late = await upload(one, ann, longText('tides and harbours', 2), 'late.txt');
    await one.deps.fileText.idle();
    expect(idsOf((await search(one, ann, 'tides harbours', 'semantic')).body)).not.toContain(late.id);
    embeddings.fail = () => undefined;
    two.deps.fileText.wake();
    await two.deps.fileText.idle();
    expect(idsOf((await search(one, ann, 'tides harbours', 'semantic')).body)[0]).toBe(late.id);
    expect(idsOf((await search(one, ann, 'moss stones', 'semantic')).body)[0]).toBe(moss.id);
  });
});

describe('when the embeddings server fails', () => {
  test('the file is still ready and found by words; the failure says nothing of the server; a later pass fills the vectors', async () => {
    const { ctx, ann } = await setup();
    embeddings.fail = () => ({ fail: 500, message: `internal error at ${embeddings.url} with ${KEY}` });
    const file = await upload(ctx, ann, PHYSICIAN, 'visit.txt');
    await ctx.deps.fileText.idle();
    expect((await ctx.json('files/getFile', { fileId: file.id }, ann)).body.textStatus).toBe('ready');
    expect((await chunksOf(ctx, file.id))[0]!.embedding).toBeNull();
    // One request for the document; the pass after it is not tried while the server is down.
    expect(embeddings.requests.length).toBe(1);

    const hybrid = await search(ctx, ann, 'physician');
    expect(hybrid.body).toMatchObject({ mode: 'text', hits: [{ fileId: file.id }] });
    const semantic = await search(ctx, ann, 'doctor', 'semantic');
    expect(semantic.status).toBe(502);
    expect(semantic.body.code).toBe('BAD_GATEWAY');
    expect(semantic.body.message).toBe('The embeddings server failed with a server error (HTTP 500).');
    const port = new URL(embeddings.url).port;
    for (const secret of [KEY, port, 'internal error']) expect(JSON.stringify(semantic.body)).not.toContain(secret);

    // The server is back: the queue's next wake-up (an upload, the server's start) fills what is missing.
    embeddings.fail = () => undefined;
    ctx.deps.fileText.wake();
    await ctx.deps.fileText.idle();
    expect((await chunksOf(ctx, file.id))[0]!.embedding_model).toBe('fake-embed');
    expect(idsOf((await search(ctx, ann, 'doctor', 'semantic')).body)).toEqual([file.id]);
  });

  test('a chunk the server refuses is recorded as refused and not sent again; the rest of its batch is embedded', async () => {
    const { ctx, ann } = await setup();
    embeddings.maxInputChars = 1500;
    // A first chunk of one long paragraph (refused), then a short one (embedded).
    const text = `${'Orchards bloom early. '.repeat(95).trim()}\n\nThe quince crop was late this year.`;
    const file = await upload(ctx, ann, text, 'long.txt');
    await ctx.deps.fileText.idle();
    const chunks = await chunksOf(ctx, file.id);
    const long = chunks.filter((c) => c.content.length > 1500);
    expect(long.length).toBeGreaterThan(0);
    expect(long.length).toBeLessThan(chunks.length);
    for (const c of chunks) {
      expect(c.embedding_model).toBe('fake-embed');
      expect(c.embedding === null).toBe(c.content.length > 1500);
    }
    embeddings.requests.length = 0;
    ctx.deps.fileText.wake();
    await ctx.deps.fileText.idle();
    expect(embeddings.requests).toEqual([]);
  });

  test('a request refused whatever its text (a setting the model lacks) records nothing', async () => {
    const { ctx, ann } = await setup();
    embeddings.fail = (r) => (r.input.some((s) => s.includes('invoices')) ? { fail: 400, message: 'This model does not support dimensions' } : undefined);
    const file = await upload(ctx, ann, PHYSICIAN, 'visit.txt');
    await ctx.deps.fileText.idle();
    expect((await chunksOf(ctx, file.id))[0]).toMatchObject({ embedding: null, embedding_model: null });
  });
});

describe('a changed model', () => {
  test("vectors of the old model are never compared with the new model's query, and are embedded again", async () => {
    const { ctx, ann, dataDir } = await setup();
    const file = await upload(ctx, ann, PHYSICIAN, 'visit.txt');
    await ctx.deps.fileText.idle();
    expect((await chunksOf(ctx, file.id))[0]!.embedding_model).toBe('fake-embed');

    // The server restarts with another model, whose server cannot embed documents yet.
    embeddings.fail = (r) => (r.input.some((s) => s.includes('invoices')) ? { fail: 503 } : undefined);
    const ctx2 = await createTestContext({ sameDatabaseAs: ctx, config: { dataDir, ...on({ embeddingsModel: 'other-embed' }) } });
    ctx2.deps.fileText.wake();
    await ctx2.deps.fileText.idle();
    expect((await chunksOf(ctx2, file.id))[0]!.embedding_model).toBe('fake-embed');
    expect((await search(ctx2, ann, 'doctor', 'semantic')).body.hits).toEqual([]);
    // Hybrid still finds it by words meanwhile.
    expect(idsOf((await search(ctx2, ann, 'physician doctor')).body)).toEqual([file.id]);

    embeddings.fail = () => undefined;
    ctx2.deps.fileText.wake();
    await ctx2.deps.fileText.idle();
    expect((await chunksOf(ctx2, file.id))[0]!.embedding_model).toBe('other-embed');
    expect(embeddings.requests.filter((r) => r.model === 'other-embed' && r.input.includes(PHYSICIAN)).length).toBe(2);
    expect(idsOf((await search(ctx2, ann, 'doctor', 'semantic')).body)).toEqual([file.id]);
  });

  test('new dimensions: every chunk is embedded again in the background, and the index of a running search follows', async () => {
    const { ctx, ann, dataDir } = await setup();
    const files = [await upload(ctx, ann, longText('engines and cars', 3), 'cars.txt'), await upload(ctx, ann, longText('moss on stones', 3), 'moss.txt')];
    await ctx.deps.fileText.idle();
    // The server restarts asking for 64 floats; it searches before the background pass has run, and keeps the codes it read.
    const ctx2 = await createTestContext({ sameDatabaseAs: ctx, config: { dataDir, ...on({ embeddingsDimensions: 64 }) } });
    expect((await search(ctx2, ann, 'car engines', 'semantic')).body.hits).toEqual([]);
    ctx2.deps.fileText.wake();
    await ctx2.deps.fileText.idle();
    const chunks = await chunksOf(ctx2);
    expect(chunks.length).toBeGreaterThan(4);
    for (const c of chunks) {
      expect(c.embedding_model).toBe('fake-embed#64');
      expect(decodeVector(c.embedding!).length).toBe(64);
    }
    expect(idsOf((await search(ctx2, ann, 'car engines', 'semantic')).body)[0]).toBe(files[0].id);
    expect(idsOf((await search(ctx2, ann, 'moss stones', 'semantic')).body)[0]).toBe(files[1].id);
  });
});

describe('a model swapped under the same name', () => {
  test('is noticed by its fingerprint (the probe text rides along every few minutes): its chunks are embedded again, the two models are never compared, and other instances follow', async () => {
    let clock = Date.now();
    const { log, lines } = captureLog();
    const { ctx: one, ann, dataDir } = await setup(on(), { log, now: () => clock });
    const physician = await upload(one, ann, PHYSICIAN, 'visit.txt');
    await upload(one, ann, GARDEN, 'garden.txt');
    await one.deps.fileText.idle();
    const two = await createTestContext({ sameDatabaseAs: one, config: { dataDir, ...on() }, now: () => clock });
    const fingerprints = () => one.query<{ model: string; generation: number | string }>(sql`SELECT model, generation FROM embedding_models`);
    expect((await fingerprints()).map((r) => [r.model, Number(r.generation)])).toEqual([['fake-embed', 1]]);
    for (const ctx of [one, two]) expect(idsOf((await search(ctx, ann, 'doctor invoicing', 'semantic')).body)).toEqual([physician.id]);

    // llama.cpp restarted with another model file: the same name, other vectors.
    embeddings.weights = 7;
    const probes = () => embeddings.requests.filter((r) => r.input.includes(PROBE_TEXT)).length;
    const before = probes();
    await search(one, ann, 'doctor invoicing', 'semantic');
    // Checked a few minutes after the last check, not at every request.
    expect(probes()).toBe(before);
    clock += CHECK_EVERY_MS;
    // Checked now: another model. No stored vector is of it yet, so nothing is compared with its query.
    expect((await search(one, ann, 'doctor invoicing', 'semantic')).body.hits).toEqual([]);
    expect(probes()).toBe(before + 1);
    const changed = lines.filter((l) => l.includes('the embeddings model answers otherwise than before under the same name'));
    expect(changed.map((l) => JSON.parse(l))).toEqual([expect.objectContaining({ level: 'warn', model: 'fake-embed', generation: 2 })]);
    // The search woke the background pass, which embeds every chunk again with the new model.
    await one.deps.fileText.idle();
    const chunks = await chunksOf(one);
    for (const c of chunks) {
      expect(c.embedding_model).toBe('fake-embed@2');
      expect([...decodeVector(c.embedding!)]).toEqual([...normaliseVector(fakeEmbedding(c.content, 256, 7))]);
    }
    expect(idsOf((await search(one, ann, 'doctor invoicing', 'semantic')).body)).toEqual([physician.id]);
    // The other instance finds the new fingerprint recorded at its own check, and takes its label: no third generation.
    expect(idsOf((await search(two, ann, 'doctor invoicing', 'semantic')).body)).toEqual([physician.id]);
    expect((await fingerprints()).map((r) => [r.model, Number(r.generation)])).toEqual([['fake-embed', 2]]);
    expect(lines.filter((l) => l.includes('answers otherwise')).length).toBe(1);
  });
});

describe('the search_files tool', () => {
  test('searches by meaning too, in the caller\'s documents only', async () => {
    const { ctx, ann, bob } = await setup(
      on({ aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', researchModel: 'small', rateLimitAi: { capacity: 1000, perMs: 1000 } }),
    );
    const mine = await upload(ctx, ann, PHYSICIAN, 'visit.txt');
    await upload(ctx, bob, "Bob's physician also sent invoices.", 'bob.txt');
    await ctx.deps.fileText.idle();
    let turn = 0;
    openai.chatScript = () =>
      turn++ === 0
        ? {
            deltas: [{ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'search_files', arguments: JSON.stringify({ query: 'doctor bills' }) } }] }],
            finish_reason: 'tool_calls',
          }
        : { deltas: [{ content: 'Found it.' }] };
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'what did the doctor say?' }, ann));
    const completed = frames.find((f) => f.data.type === 'file_search.completed')!.data;
    expect(completed.results).toEqual([{ fileId: mine.id, filename: 'visit.txt', page: null }]);
    const toolMessage = openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').at(-1)!.body.messages.find((m: any) => m.role === 'tool');
    expect(toolMessage.content).toContain('invoices from last spring');
    expect(toolMessage.content).not.toContain('Bob');
  });
});
