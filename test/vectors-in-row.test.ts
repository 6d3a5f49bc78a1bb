/**
 * Vectors kept in the row on PostgreSQL (migrations/pg/0025_vectors_in_row.sql, src/db/vector-column.ts):
 * a library written under the previous schema (base64 text, moved out of line to the TOAST table)
 * is migrated in place, every vector the same floats, and searched through HTTP with the same
 * answers as the exact ranking of the vectors written. SQLite keeps base64 text (no migration):
 * the same library written as before answers the same there.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { SQL } from 'bun';
import { sql as q } from 'drizzle-orm';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { fakeEmbedding, startFakeEmbeddings } from './fakes/openai-embeddings';
import { postgresAvailable, startPostgres, type TestPostgres } from './support/postgres';
import { connectPg } from '../src/db/pg/connect';
import { migratePg } from '../src/db/pg/migrate';
import { pgMigrations } from '../src/db/pg/migrations';
import { decodeVector, encodeSignBits, encodeVector, normaliseVector } from '../src/files/embeddings-vectors';

setDefaultTimeout(60_000);

const embeddings = startFakeEmbeddings();
afterAll(() => embeddings.stop());
const config = { embeddingsBaseUrl: embeddings.url, embeddingsModel: 'fake-embed' };

const WORDS = ['harbour', 'tides', 'moss', 'stones', 'engines', 'cars', 'invoices', 'doctor', 'orchards', 'spring', 'lighthouse', 'ferry'];
/** Chunks of the searching user's documents: 256 dimensions, the fake server's, so queries embed alike. */
const library = Array.from({ length: 6 }, (_, f) =>
  Array.from({ length: 5 }, (_, seq) => {
    const content = `${WORDS[(f * 2 + seq) % WORDS.length]} ${WORDS[(f + seq * 3) % WORDS.length]} ${WORDS[(f * 5 + seq) % WORDS.length]} note ${f}.${seq}`;
    return { fileId: `doc-${f}`, seq, content, vector: normaliseVector(fakeEmbedding(content, 256)) };
  }),
).flat();
/** Chunks as large as a real library's (1,536 dimensions beside ~2,000 characters): what PostgreSQL moved out of line. */
const large = Array.from({ length: 40 }, (_, seq) => ({
  seq,
  content: Array.from({ length: 280 }, (_, i) => `${WORDS[(seq * 7 + i * 3) % WORDS.length]}${(i * 37 + seq) % 500}`).join(' '),
  vector: normaliseVector(Float32Array.from({ length: 1536 }, (_, i) => Math.sin(seq * 1536 + i))),
}));

const now = Date.now();
/** The rows as the previous schema's code wrote them: base64 text, with their sign bits and model. */
async function writeLibrary(exec: (statement: string, params: unknown[]) => Promise<unknown>, userId: string): Promise<void> {
  await exec('INSERT INTO file_blobs (sha256, size, created_at) VALUES ($1, 1, $2)', ['blob', now]);
  for (const fileId of [...new Set(library.map((c) => c.fileId)), 'big'])
    await exec('INSERT INTO files (id, user_id, sha256, filename, mime_type, kind, size, text_status, text_chars, created_at) VALUES ($1, $2, $3, $4, $5, $6, 1, $7, 1, $8)', [
      fileId,
      userId,
      'blob',
      `${fileId}.txt`,
      'text/plain',
      'document',
      'ready',
      now,
    ]);
  const chunks = [...library.map((c) => ({ ...c, model: 'fake-embed' })), ...large.map((c) => ({ ...c, fileId: 'big', model: 'older-model' }))];
  for (const c of chunks)
    await exec('INSERT INTO file_chunks (id, file_id, seq, start_char, content, embedding, embedding_code, embedding_model) VALUES ($1, $2, $3, 0, $4, $5, $6, $7)', [
      `${c.fileId}-${c.seq}`,
      c.fileId,
      c.seq,
      c.content,
      encodeVector(c.vector),
      encodeSignBits(c.vector),
      c.model,
    ]);
}

/**
 * The exact cosine of each chunk to `query`, best first, by `fileId:excerpt` as the search's hits
 * are named: the search must return the top `limit` scores (chunks of equal score may come in
 * either order).
 */
function exactScores(query: string): Map<string, number> {
  const v = normaliseVector(fakeEmbedding(query, 256));
  const scored = library.map((c) => [`${c.fileId}:${c.content}`, c.vector.reduce((sum, x, i) => sum + x * v[i]!, 0)] as const);
  return new Map(scored.filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1]));
}

const rounded = (scores: number[]) => scores.map((s) => Math.round(s * 1e5) / 1e5);

async function expectSearchesExact(ctx: TestContext, as: TestUser): Promise<void> {
  for (const query of ['harbour tides', 'doctor invoices spring', 'engines and cars', 'a lighthouse ferry']) {
    const exact = exactScores(query);
    expect(exact.size).toBeGreaterThan(5);
    for (let round = 0; round < 2; round++) {
      const res = await ctx.json('files/searchFiles', { query, mode: 'semantic', limit: 5 }, as);
      expect(res.status).toBe(200);
      const found = res.body.hits.map((h: { fileId: string; excerpt: string }) => exact.get(`${h.fileId}:${h.excerpt}`) ?? -1);
      expect(rounded(found)).toEqual(rounded([...exact.values()].slice(0, 5)));
    }
  }
}

describe.if(postgresAvailable())('PostgreSQL: vectors moved into the row', () => {
  let pg: TestPostgres;
  let admin: SQL;
  beforeAll(async () => {
    pg = await startPostgres();
    admin = connectPg(pg.url, 1);
  });
  afterAll(async () => {
    await admin?.close();
    await pg?.stop();
  });

  test('a library written under the previous schema is migrated in place: the same floats, in the row, and searches answer the exact ranking', async () => {
    await admin.unsafe('CREATE DATABASE before_in_row');
    const url = pg.url.replace(/\/postgres$/, '/before_in_row');
    const sql = connectPg(url, 1);
    await migratePg(sql, pgMigrations.filter((m) => m.tag < '0025_vectors_in_row'));
    const owner = 'user-before';
    await sql`INSERT INTO users (id, email, subscription_updated_at, created_at, updated_at) VALUES (${owner}, 'before@example.org', ${now}, ${now}, ${now})`;
    await writeLibrary((statement, params) => sql.unsafe(statement, params as never), owner);
    await sql`INSERT INTO file_chunks (id, file_id, seq, start_char, content, embedding, embedding_model) VALUES ('refused', 'big', 999, 0, 'a chunk the model refused', NULL, 'older-model')`;
    // Before: each large chunk's vector and text went out of line (two TOAST values a row).
    const toast = async () => {
      const [{ t }] = await sql`SELECT reltoastrelid::regclass::text AS t FROM pg_class WHERE relname = 'file_chunks'`;
      return Number((await sql.unsafe(`SELECT count(DISTINCT chunk_id) AS n FROM ${t}`))[0].n);
    };
    expect(await toast()).toBe(2 * large.length);

    // This one first; those written after it follow.
    expect((await migratePg(sql))[0]).toBe('0025_vectors_in_row');
    const [column] = await sql`SELECT data_type AS type, a.attstorage AS storage FROM information_schema.columns c
      JOIN pg_attribute a ON a.attrelid = 'file_chunks'::regclass AND a.attname = c.column_name
      WHERE c.table_name = 'file_chunks' AND c.column_name = 'embedding'`;
    expect(column).toEqual({ type: 'bytea', storage: 'm' });
    const [{ reloptions, allVisible }] = await sql`SELECT reloptions, relallvisible AS "allVisible" FROM pg_class WHERE relname = 'file_chunks'`;
    expect(reloptions).toContain('toast_tuple_target=8160');
    // Vacuumed after the rewrite: its pages marked all-visible, so the codes' index answers alone.
    expect(Number(allVisible)).toBeGreaterThan(0);
    // Every vector the same floats, now raw bytes; the refused one still null.
    const rows: { id: string; embedding: Uint8Array | null; seq: number }[] = await sql`SELECT id, embedding, seq FROM file_chunks ORDER BY id`;
    const written = new Map<string, Float32Array>([...library.map((c) => [`${c.fileId}-${c.seq}`, c.vector] as const), ...large.map((c) => [`big-${c.seq}`, c.vector] as const)]);
    expect(rows.length).toBe(written.size + 1);
    for (const row of rows) {
      if (row.id === 'refused') expect(row.embedding).toBeNull();
      else expect([...decodeVector(row.embedding!)]).toEqual([...written.get(row.id)!]);
    }
    // After: the vectors are in the row; only the large chunks' text is still out of line (one TOAST value a row).
    expect(await toast()).toBe(large.length);
    await sql.close();

    const ctx = await createTestContext({ pgUrl: url, users: [{ email: 'ann@example.org' }], config });
    const ann = ctx.users[0]!;
    await ctx.query(q`UPDATE files SET user_id = ${ann.user.id}`);
    await expectSearchesExact(ctx, ann);
    // A document uploaded after the migration: its vectors written as bytes, read back as the same floats.
    const form = new FormData();
    form.append('file', new Blob(['The ferry leaves the harbour at dawn when the tides allow it.']), 'ferry.txt');
    const res = await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': ann.key }, body: form }));
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    await ctx.deps.fileText.idle();
    const [chunk] = await ctx.query<{ content: string; embedding: Uint8Array }>(q`SELECT content, embedding FROM file_chunks WHERE file_id = ${id}`);
    expect(chunk!.embedding).toBeInstanceOf(Uint8Array);
    expect([...decodeVector(chunk!.embedding)]).toEqual([...normaliseVector(fakeEmbedding(chunk!.content, 256))]);
    await ctx.close();
  });
});

describe('SQLite: vectors stay base64 text', () => {
  test('a library written as before is searched with the same answers as the exact ranking', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config });
    const ann = ctx.users[0]!;
    if (ctx.store.dialect === 'pg') return void (await ctx.close());
    await writeLibrary(async (statement, params) => ctx.db.$client.run(statement.replace(/\$\d+/g, '?'), params as never), ann.user.id);
    await expectSearchesExact(ctx, ann);
    await ctx.close();
  });
});
