/**
 * Semantic search of documents against full-text search and against the exact scan, in the same
 * run (docs/files.md, "Semantic search"): the time of one search (p50, p95), recall@10 against
 * the exact ranking, and the searching process's peak resident memory, with 10,000 and 100,000
 * chunks of one user, vectors of 384 and 1,536 dimensions, on SQLite and (with --pg) PostgreSQL.
 *
 *   node_modules/.bin/bun run bench/file-search.ts [--pg] [--quick] [--plan] [--uniform]
 *                                                  [--sizes 250000,500000] [--dims 384] [--no-write]
 *                                                  [--db sqlite|pg] [--modes exact,semantic]
 *                                                  [--index-mb 256] [--keep DIR] [--pg-url URL]
 *
 * --quick: 10,000 chunks only, and RESULTS.md is left alone; --plan: print each database's plan
 * for a page of the vector scan; --uniform: vectors uniformly random on the sphere (below);
 * --sizes / --dims: other libraries (the projection to a million chunks), written to
 * bench/results/file-search-<sizes>.json and not to RESULTS.md (so do --db and --modes); --keep
 * and --pg-url keep the libraries between runs (below). A full run rewrites its section
 * of bench/RESULTS.md (between markers) and writes bench/results/file-search.json.
 *
 * The library is written straight into the tables (files, chunks of ~2,000 characters drawn from
 * a 5,000-word vocabulary, a unit vector each, labelled with the model), as the queue would leave
 * it; another user holds a tenth as many chunks, which a search must not read. Vectors are drawn
 * as embeddings fall (bench/lib/vectors.ts): each document has a topic, each chunk is its topic
 * plus noise, a query is a topic plus more noise; the searching user's documents cover the
 * topics in turn. With --uniform every vector and query is uniformly random instead: no
 * neighbour stands out, the worst case for any index that does not read every vector.
 *
 * Each measurement runs in a child process of its own, so that its peak memory is the search's and
 * not the seeding's: it opens the database, runs one search to warm up (for the semantic search,
 * the one that reads every vector and builds the index: "first search"), then `runs` searches:
 * - text: `searchFileChunks`, two vocabulary words (each in ~5% of the chunks), the baseline;
 * - exact: every vector of the user's documents read a page at a time and scored (`exactSearch`
 *   below, as every search did before the index); its top 10 are the truth recall is measured
 *   against;
 * - semantic: `searchByVector` with the index (the default 64 MB, or --index-mb): candidates by
 *   sign bits (the first search reads them from the database), their vectors read back and scored;
 * - hybrid: `searchDocuments` as `files/searchFiles` runs it by default: the query embedded by a
 *   local fake server (test/fakes/openai-embeddings.ts), both searches, fused.
 * - phases: the semantic search's steps one by one, each timed (`phasedSearch` below): where its
 *   time goes, printed as the mean of each step (not written to RESULTS.md).
 * The exact and semantic children draw the same query vectors. The database file (or
 * PostgreSQL's) is in the page cache after the warm-up: these are warm figures.
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQL as BunSQL } from 'bun';
import { drizzle } from 'drizzle-orm/bun-sql';
import { openDatabase, type Db } from '../src/db/connection';
import { migrate } from '../src/db/migrate';
import { migratePg } from '../src/db/pg/migrate';
import { pgMigrations } from '../src/db/pg/migrations';
import { connectPg } from '../src/db/pg/connect';
import { pgStore } from '../src/db/pg/store';
import * as pgSchema from '../src/db/pg/schema';
import * as schema from '../src/db/schema';
import { sqliteStore } from '../src/db/store';
import { rawRows, type Store, type Tx, type Work } from '../src/db/work';
import { sql } from 'drizzle-orm';
import { testConfig } from '../src/config';
import { silentLogger } from '../src/log';
import { createConnections } from '../src/connections/resolver';
import { createMemoryBus } from '../src/pubsub/bus';
import type { AppDeps } from '../src/deps';
import { newId } from '../src/ids';
import { searchFileChunks } from '../src/files/file-text.store';
import { countVectors, listSearchableFiles, listUncodedVectors, readChunkVectors, readCodePage, readVectorPage, saveCodes, type ChunkKey } from '../src/files/embeddings.store';
import { candidateDepth, createEmbeddingsIndex } from '../src/files/embeddings-index';
import { NearestCodes } from '../src/files/embeddings-nearest';
import { searchByVector, searchDocuments } from '../src/files/embeddings-search';
import { countCodes, planPages } from '../src/files/embeddings-codes';
import { createDecoder, createScorer, decodeVector, dot, encodeSignBits, encodeVector, TopK } from '../src/files/embeddings-vectors';
import { CHUNK_NOISE, nearTopic, QUERY_NOISE, randomStream, TOPICS } from './lib/vectors';
import { startFakeEmbeddings } from '../test/fakes/openai-embeddings';
import { startPostgres } from '../test/support/postgres';
import { percentile } from './lib/stats';
import { describeMachine, loadNow, headCommit } from './lib/report';

const MODEL = 'bench-embed';
const USER = 'bench-user';
const OTHER = 'other-user';
const CHUNKS_PER_FILE = 100;
const VOCABULARY = 5000;
const WORDS_PER_CHUNK = 280;

const uniform = Bun.argv.includes('--uniform');
/**
 * --layouts (PostgreSQL): the library seeded under the previous schema (vectors as base64 text,
 * which PostgreSQL moves out of line), then copied and the copy migrated (vectors as bytea in the
 * row, migrations/pg/0025_vectors_in_row.sql); every mode measured on both, alternated, in the
 * same run. The migration's time and both databases' sizes are printed.
 */
const layouts = Bun.argv.includes('--layouts');
const VECTORS_IN_ROW = '0025_vectors_in_row';
/** --index-mb N: PARLEY_EMBEDDINGS_INDEX_MB of the searching children (a million chunks of 1,536 dimensions need ~200). */
const indexMb = Bun.argv.includes('--index-mb') ? Number(Bun.argv[Bun.argv.indexOf('--index-mb') + 1]) : undefined;

type Mode = 'text' | 'exact' | 'semantic' | 'hybrid' | 'phases';
type Target = { kind: 'sqlite'; path: string } | { kind: 'pg'; url: string };
type Spec = { target: Target; dims: number; size: number; mode: Mode; runs: number; uniform: boolean; indexMb?: number };
/** `stallMs`: the longest the event loop went without running a timer due every millisecond, during the first search and during the others. */
type Measured = { p50: number; p95: number; runs: number; hits: number; firstMs: number; baseRssMB: number; peakRssMB: number; endRssMB: number; stallMs: { first: number; later: number }; found: string[][]; phases?: Record<string, number> };

// --- the vocabulary and the library ---

const SYLLABLES = ['ka', 'lo', 'mi', 'ner', 'sto', 'va', 'quin', 'dra', 'pel', 'tor', 'zu', 'ben', 'chi', 'gro', 'fa', 'wil'];
const vocabulary = (() => {
  const rnd = randomStream(7);
  const words = new Set<string>();
  while (words.size < VOCABULARY) {
    let w = '';
    for (let n = 2 + Math.floor(rnd() * 3); n > 0; n--) w += SYLLABLES[Math.floor(rnd() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
})();

function chunkText(rnd: () => number): string {
  const words: string[] = [];
  for (let i = 0; i < WORDS_PER_CHUNK; i++) words.push(vocabulary[Math.floor(rnd() * VOCABULARY)]!);
  return words.join(' ');
}

type ChunkRow = { id: string; file_id: string; seq: number; page: null; start_char: number; content: string; embedding: string; embedding_code: string; embedding_model: string };

/** The chunks of `files` new files of `userId`, a file at a time; the searching user's n-th file is of topic n mod TOPICS. */
function* libraryFiles(userId: string, files: number, dims: number, rnd: () => number, firstFile: number) {
  for (let f = 0; f < files; f++) {
    const topic = userId === USER ? (firstFile + f) % TOPICS : Math.floor(rnd() * TOPICS);
    const fileId = newId();
    const file = { id: fileId, user_id: userId, sha256: 'bench-blob', filename: `doc-${fileId}.txt`, mime_type: 'text/plain', kind: 'document', size: 1, text_status: 'ready', text_chars: CHUNKS_PER_FILE * 1800, created_at: Date.now() };
    const chunks: ChunkRow[] = [];
    for (let seq = 0; seq < CHUNKS_PER_FILE; seq++) {
      const v = nearTopic(rnd, dims, topic, CHUNK_NOISE, uniform);
      chunks.push({ id: newId(), file_id: fileId, seq, page: null, start_char: seq * 1800, content: chunkText(rnd), embedding: encodeVector(v), embedding_code: encodeSignBits(v), embedding_model: MODEL });
    }
    yield { file, chunks };
  }
}

const now = Date.now();
const users = [USER, OTHER].map((id) => ({ id, email: `${id}@example.org`, subscription_updated_at: now, created_at: now, updated_at: now }));

/** Add chunks to the library until `USER` has `size` (and `OTHER` a tenth as many). */
async function grow(target: Target, handle: Db | BunSQL, dims: number, from: number, size: number): Promise<void> {
  const rnd = randomStream(size * 31 + dims);
  const plan: [string, number][] = [
    [USER, (size - from) / CHUNKS_PER_FILE],
    [OTHER, (size - from) / 10 / CHUNKS_PER_FILE],
  ];
  for (const [userId, files] of plan) {
    if (target.kind === 'sqlite') {
      const db = (handle as Db).$client;
      const insertFile = db.prepare(
        'INSERT INTO files (id, user_id, sha256, filename, mime_type, kind, size, text_status, text_chars, created_at) VALUES ($id, $user_id, $sha256, $filename, $mime_type, $kind, $size, $text_status, $text_chars, $created_at)',
      );
      const insertChunk = db.prepare(
        'INSERT INTO file_chunks (id, file_id, seq, page, start_char, content, embedding, embedding_code, embedding_model) VALUES ($id, $file_id, $seq, $page, $start_char, $content, $embedding, $embedding_code, $embedding_model)',
      );
      const insert = db.transaction((file: Record<string, unknown>, chunks: ChunkRow[]) => {
        insertFile.run(file as never);
        for (const c of chunks) insertChunk.run(c as never);
      });
      for (const { file, chunks } of libraryFiles(userId, files, dims, rnd, from / CHUNKS_PER_FILE)) insert(file, chunks);
    } else {
      const sql = handle as BunSQL;
      // Written as the column holds them: bytea since migrations/pg/0023, base64 text before.
      const [{ type }] = await sql`SELECT data_type AS type FROM information_schema.columns WHERE table_name = 'file_chunks' AND column_name = 'embedding'`;
      const stored = (c: ChunkRow) => (type === 'bytea' ? { ...c, embedding: Buffer.from(c.embedding, 'base64') } : c);
      for (const { file, chunks } of libraryFiles(userId, files, dims, rnd, from / CHUNKS_PER_FILE)) {
        await sql`INSERT INTO files ${sql(file)}`;
        for (let i = 0; i < chunks.length; i += 50) await sql`INSERT INTO file_chunks ${sql(chunks.slice(i, i + 50).map(stored))}`;
      }
    }
  }
}

/**
 * The library's database, new, or with --keep the one a previous run left (migrated, and grown
 * from the chunks it holds: `have`).
 */
async function openTarget(kind: 'sqlite' | 'pg', dims: number, dir: string, pgUrl?: string): Promise<{ target: Target; handle: Db | BunSQL; have: number; close(): Promise<void> }> {
  const tag = `${dims}${uniform ? '_uniform' : ''}`;
  if (kind === 'sqlite') {
    const path = join(dir, `search-${tag}.db`);
    const reused = existsSync(path);
    const db = openDatabase(path);
    migrate(db.$client);
    if (!reused) {
      db.$client.run('INSERT INTO file_blobs (sha256, size, created_at) VALUES (?, 1, ?)', ['bench-blob', now]);
      for (const u of users) db.$client.run('INSERT INTO users (id, email, subscription_updated_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?)', [u.id, u.email, now, now, now]);
    }
    const have = (db.$client.query('SELECT count(*) AS n FROM file_chunks c JOIN files f ON f.id = c.file_id WHERE f.user_id = ?').get(USER) as { n: number }).n;
    return { target: { kind, path }, handle: db, have, close: async () => db.$client.close() };
  }
  const admin = connectPg(pgUrl!, 1);
  const reused = (await admin`SELECT 1 FROM pg_database WHERE datname = ${`search_${tag}`}`).length > 0;
  if (!reused) await admin.unsafe(`CREATE DATABASE search_${tag}`);
  await admin.close();
  const url = pgUrl!.replace(/\/[^/]*$/, `/search_${tag}`);
  const sql = connectPg(url, 2);
  // --layouts: the library as the previous schema held it (base64 text, out of line), migrated in a copy later.
  await migratePg(sql, layouts ? pgMigrations.filter((m) => m.tag < VECTORS_IN_ROW) : pgMigrations);
  if (!reused) {
    await sql`INSERT INTO file_blobs ${sql({ sha256: 'bench-blob', size: 1, created_at: now })}`;
    await sql`INSERT INTO users ${sql(users)}`;
  }
  const [{ n }] = await sql`SELECT count(*)::int AS n FROM file_chunks c JOIN files f ON f.id = c.file_id WHERE f.user_id = ${USER}`;
  return { target: { kind, url }, handle: sql, have: Number(n), close: () => sql.close() };
}

/**
 * A copy of a library kept under the previous schema (--layouts), migrated to the current one;
 * the migration's time printed. The copy is made anew each run (CREATE DATABASE … TEMPLATE: the
 * template may have no other connection meanwhile).
 */
async function migratedCopy(url: string): Promise<{ target: { kind: 'pg'; url: string }; dbMB: number }> {
  const name = `${new URL(url).pathname.slice(1)}_in_row`;
  const admin = connectPg(url.replace(/\/[^/]*$/, '/postgres'), 1);
  await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${new URL(url).pathname.slice(1)} AND pid <> pg_backend_pid()`;
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name}`);
  await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${new URL(url).pathname.slice(1)}`);
  await admin.close();
  const copyUrl = url.replace(/\/[^/]*$/, `/${name}`);
  const sql = connectPg(copyUrl, 1);
  const sizeOf = async () => Math.round(Number((await sql`SELECT pg_database_size(current_database()) AS n`)[0].n) / 2 ** 20);
  const before = await sizeOf();
  const start = performance.now();
  await migratePg(sql);
  const seconds = (performance.now() - start) / 1000;
  const [toast] = await sql`SELECT pg_relation_size(reltoastrelid) AS toast FROM pg_class WHERE relname = 'file_chunks'`;
  const dbMB = await sizeOf();
  console.log(`  migrated a copy to ${VECTORS_IN_ROW} in ${seconds.toFixed(1)} s: ${before} MB → ${dbMB} MB, file_chunks' TOAST table ${Math.round(Number(toast.toast) / 2 ** 20)} MB`);
  await sql.close();
  return { target: { kind: 'pg', url: copyUrl }, dbMB };
}

/** The database's plans for a search's statements: counting a user's vectors, a page of codes (several files, a range of one), vectors not coded yet, the candidates. */
async function printPlan(target: Target, handle: Db | BunSQL): Promise<void> {
  const ids = target.kind === 'sqlite'
    ? ((handle as Db).$client.query('SELECT id FROM files WHERE user_id = ? ORDER BY id LIMIT 5').all(USER) as { id: string }[]).map((r) => r.id)
    : ((await (handle as BunSQL)`SELECT id FROM files WHERE user_id = ${USER} ORDER BY id LIMIT 5`) as { id: string }[]).map((r) => r.id);
  const tx: Tx =
    target.kind === 'sqlite'
      ? { db: handle as Db, t: schema, dialect: 'sqlite' }
      : ({ db: drizzle({ client: handle as BunSQL, schema: pgSchema }), t: pgSchema, dialect: 'pg' } as unknown as Tx);
  type Q = { sql: string; params: unknown[] };
  // A builder says its own SQL; a raw statement (`rawRows`: the candidates') is an SQL object the
  // dialect turns into one (it has no toSQL: --plan crashed on it).
  const dialect = (tx.db as unknown as { dialect: { sqlToQuery(q: unknown): Q } }).dialect;
  const sqlsOf = (work: Generator<unknown, unknown, unknown>): Q[] => {
    const out: Q[] = [];
    for (let step = work.next(); !step.done; step = work.next([])) {
      const query = (step.value as { query: { toSQL?(): Q } }).query;
      out.push(query.toSQL ? query.toSQL() : dialect.sqlToQuery(query));
    }
    return out;
  };
  const queries: [string, Q[]][] = [
    ['count', sqlsOf(countVectors(tx, ids, MODEL))],
    ['codes of files', sqlsOf(readCodePage(tx, { fileIds: ids }, MODEL))],
    ['codes of a range', sqlsOf(readCodePage(tx, { fileId: ids[0]!, fromSeq: 0, toSeq: 50 }, MODEL))],
    ['vectors not coded', sqlsOf(readVectorPage(tx, { fileIds: ids }, MODEL, { uncoded: true }))],
    ['candidates', sqlsOf(readChunkVectors(tx, ids.map((fileId, i) => ({ fileId, seq: i }))))],
  ];
  for (const [name, qs] of queries) {
    for (const q of qs) {
      if (target.kind === 'sqlite') {
        const rows = (handle as Db).$client.query(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.params as never[])) as { detail: string }[];
        console.log(`  SQLite plan, ${name}:\n${rows.map((r) => `    ${r.detail}`).join('\n')}`);
      } else {
        const rows = (await (handle as BunSQL).unsafe(`EXPLAIN ${q.sql}`, q.params as never[])) as { 'QUERY PLAN': string }[];
        console.log(`  PostgreSQL plan, ${name}:\n${rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}`);
      }
    }
  }
}

/**
 * The exact search, the truth recall is measured against and the baseline of every ratio: every
 * vector of the user's documents read a page at a time and scored (as every search did before
 * the index), the best `limit` kept.
 */
async function exactSearch(store: Store, vector: Float32Array, limit: number): Promise<ChunkKey[]> {
  const files = await store.read((tx) => listSearchableFiles(tx, { userId: USER }));
  const counts = await countCodes({ store }, files, MODEL);
  const decode = createDecoder(vector.length);
  const best = new TopK<ChunkKey>(limit);
  const rows = Math.floor((2 * 1024 * 1024) / (Math.ceil((vector.length * 4) / 3) * 4));
  for (const page of planPages(counts.map((c) => ({ fileId: c.fileId, chunks: c.coded + c.uncoded })), rows)) {
    for (const row of await store.read((tx) => readVectorPage(tx, page, MODEL))) {
      const v = decode(row.embedding);
      const score = v ? dot(vector, v) : 0;
      if (score > 0) best.push(score, { fileId: row.fileId, seq: Number(row.seq) });
    }
  }
  return best.sorted().map((r) => r.item);
}

/**
 * `searchByVector`'s steps one by one (--modes phases), each timed into `into` (ms, summed over
 * the searches): where a search with the index spends its time. The same calls in the same
 * order; the candidates' read is timed twice more, without the vectors and with the vectors
 * alone, to tell the statement's cost from the vectors' transfer.
 */
async function phasedSearch(deps: AppDeps, vector: Float32Array, limit: number, into: Record<string, number>): Promise<ChunkKey[]> {
  let t = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    into[name] = (into[name] ?? 0) + now - t;
    t = now;
  };
  const files = await deps.store.read((tx) => listSearchableFiles(tx, { userId: USER }));
  lap('list files');
  const held = files.map((f) => deps.embeddingsIndex.get(f.fileId, f.version, MODEL, vector.length)!);
  const chunks = held.reduce((n, doc) => n + doc.seqs.length, 0);
  lap('index look-ups');
  const nearest = new NearestCodes(vector, candidateDepth(chunks, limit));
  for (const doc of held) await nearest.add(doc.fileId, doc.codes, doc.seqs);
  lap('Hamming scan');
  const candidates = nearest.best().sort((a, b) => (a.fileId < b.fileId ? -1 : a.fileId > b.fileId ? 1 : a.seq - b.seq));
  lap('rank by floats');
  const rows = await deps.store.read((tx) => readChunkVectors(tx, candidates));
  lap('read candidates');
  const score = createScorer(vector);
  const best = new TopK<ChunkKey>(limit);
  for (const row of rows) {
    const s = score(row.embedding);
    if (s !== undefined && s > 0) best.push(s, { fileId: row.fileId, seq: row.seq });
  }
  lap('decode + score');
  await deps.store.read((tx) => readChunkRowsOnly(tx, candidates, false));
  lap('(read candidates without vectors)');
  await deps.store.read((tx) => readChunkRowsOnly(tx, candidates, true));
  lap('(read candidates\' vectors alone)');
  await deps.store.read((tx) => readChunkVectors(tx, best.sorted().map((r) => r.item)));
  lap('(read the 10 hits whole)');
  await deps.store.read((tx) => rawRows(sql`SELECT 1`));
  lap('(SELECT 1)');
  return best.sorted().map((r) => r.item);
}

/** The candidates' statement without its vectors, or with nothing else: what the vectors add to it. */
function* readChunkRowsOnly(_tx: Tx, keys: ChunkKey[], vectorsOnly: boolean): Work<unknown[]> {
  const values = sql.join(keys.map((k) => sql`(${k.fileId}, CAST(${k.seq} AS integer))`), sql`, `);
  const columns = vectorsOnly ? sql`c.embedding` : sql`c.file_id, CAST(c.seq AS integer) AS seq, c.embedding_model, f.filename, CAST(c.page AS integer) AS page, c.content`;
  return yield* rawRows(sql`WITH k(file_id, seq) AS (VALUES ${values}) SELECT ${columns} FROM k JOIN file_chunks c ON c.file_id = k.file_id AND c.seq = k.seq JOIN files f ON f.id = c.file_id WHERE c.embedding IS NOT NULL`);
}

/**
 * Codes for the vectors of a library kept from before codes were stored (--keep), by the
 * statements the background pass runs (src/files/embeddings-fill.ts): what an upgrade costs once.
 */
async function codeKept(store: Store): Promise<void> {
  const start = performance.now();
  let coded = 0;
  for (;;) {
    const rows = await store.read((tx) => listUncodedVectors(tx, 250));
    if (!rows.length) break;
    await store.write((tx) => saveCodes(tx, rows.map((r) => ({ id: r.id, code: encodeSignBits(decodeVector(r.embedding)) }))));
    coded += rows.length;
  }
  if (coded) console.log(`  coded ${coded.toLocaleString('en')} vectors stored without codes in ${((performance.now() - start) / 1000).toFixed(1)} s`);
}

/** The database file and its WAL, in MB. */
const sizeMB = (path: string) => Math.round([path, `${path}-wal`].reduce((n, p) => n + (existsSync(p) ? statSync(p).size : 0), 0) / 2 ** 20);

// --- the measuring child ---

const statusMB = (field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024;

async function measure(spec: Spec): Promise<Measured> {
  const store: Store = spec.target.kind === 'sqlite' ? sqliteStore(openDatabase(spec.target.path)) : pgStore(connectPg(spec.target.url, 2));
  const fake = spec.mode === 'hybrid' ? startFakeEmbeddings({ dims: spec.dims }) : undefined;
  const config = testConfig({ embeddingsBaseUrl: fake?.url ?? 'http://127.0.0.1:9/v1', embeddingsModel: MODEL, ...(spec.indexMb !== undefined ? { embeddingsIndexMb: spec.indexMb } : {}) });
  const connections = createConnections({ config, store, bus: createMemoryBus(), now: Date.now, instanceId: 'bench' });
  const deps = { config, store, log: silentLogger, now: Date.now, connections, embeddingsIndex: createEmbeddingsIndex(config.embeddingsIndexMb * 2 ** 20) } as AppDeps;
  const rnd = randomStream(99);
  const words = () => `${vocabulary[Math.floor(rnd() * VOCABULARY)]} ${vocabulary[Math.floor(rnd() * VOCABULARY)]}`;
  const topicsUsed = Math.min(TOPICS, spec.size / CHUNKS_PER_FILE);
  const keys = (hits: { fileId: string; seq: number }[]) => hits.map((h) => `${h.fileId}:${h.seq}`);
  let phases: Record<string, number> | undefined;
  const once = async (): Promise<string[]> => {
    if (spec.mode === 'text') return keys(await store.read((tx) => searchFileChunks(tx, { userId: USER, query: words(), limit: 10 })));
    if (spec.mode === 'hybrid') return keys((await searchDocuments(deps, { userId: USER, query: words(), limit: 10 })).hits);
    const vector = nearTopic(rnd, spec.dims, Math.floor(rnd() * topicsUsed), QUERY_NOISE, spec.uniform);
    if (spec.mode === 'exact') return keys(await exactSearch(store, vector, 10));
    if (spec.mode === 'phases') {
      // The first search builds the index (searchByVector's own), the later ones are timed by phase.
      if (!phases) return keys(await searchByVector(deps, { userId: USER, model: MODEL, vector, limit: 10 }).then((h) => ((phases = {}), h)));
      return keys(await phasedSearch(deps, vector, 10, phases));
    }
    return keys(await searchByVector(deps, { userId: USER, model: MODEL, vector, limit: 10 }));
  };
  const baseRssMB = statusMB('VmRSS');
  // What another request would wait: the gaps between ticks of a timer due every millisecond.
  let last = performance.now();
  let stall = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 1);
  const stallSince = () => {
    const s = Math.max(stall, performance.now() - last);
    stall = 0;
    return s;
  };
  const first = performance.now();
  const found = [await once()];
  const firstMs = performance.now() - first;
  const firstStall = stallSince();
  await Bun.sleep(5);
  stallSince();
  const times: number[] = [];
  for (let i = 0; i < spec.runs; i++) {
    const start = performance.now();
    found.push(await once());
    times.push(performance.now() - start);
  }
  const stallMs = { first: firstStall, later: stallSince() };
  clearInterval(ticker);
  fake?.stop();
  return { p50: percentile(times, 50), p95: percentile(times, 95), runs: spec.runs, hits: found.at(-1)!.length, firstMs, baseRssMB, peakRssMB: statusMB('VmHWM'), endRssMB: statusMB('VmRSS'), stallMs, found, ...(phases ? { phases: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, v / spec.runs])) } : {}) };
}

/** The share of the exact top 10s that the semantic search found, over the same queries. */
function recallOf(exact: Measured, approx: Measured): number {
  let hit = 0;
  let all = 0;
  exact.found.slice(0, approx.found.length).forEach((truth, i) => {
    const got = new Set(approx.found[i]);
    all += truth.length;
    hit += truth.filter((k) => got.has(k)).length;
  });
  return all ? hit / all : 1;
}

function runChild(spec: Spec): Measured {
  const out = execSync(`${JSON.stringify(process.execPath)} run ${JSON.stringify(import.meta.path)} --child ${JSON.stringify(JSON.stringify(spec))}`, { maxBuffer: 1 << 20 });
  return JSON.parse(out.toString().trim().split('\n').at(-1)!) as Measured;
}

// --- the run ---

if (Bun.argv.includes('--child')) {
  console.log(JSON.stringify(await measure(JSON.parse(Bun.argv[Bun.argv.indexOf('--child') + 1]!) as Spec)));
  process.exit(0);
}

const quick = Bun.argv.includes('--quick');
const onlyDb = Bun.argv.includes('--db') ? (Bun.argv[Bun.argv.indexOf('--db') + 1] as 'sqlite' | 'pg') : undefined;
const withPg = Bun.argv.includes('--pg') || Bun.argv.includes('--pg-url') || onlyDb === 'pg';
const showPlan = Bun.argv.includes('--plan');
const listArg = (name: string) => (Bun.argv.includes(name) ? Bun.argv[Bun.argv.indexOf(name) + 1]!.split(',').map(Number) : undefined);
const custom = !!(listArg('--sizes') ?? listArg('--dims')) || uniform || layouts || Bun.argv.includes('--modes') || Bun.argv.includes('--db');
const write = !quick && !Bun.argv.includes('--no-write');
const SIZES = listArg('--sizes') ?? (quick ? [10_000] : [10_000, 100_000]);
const DIMS = listArg('--dims') ?? [384, 1536];
const MODES = (Bun.argv.includes('--modes') ? Bun.argv[Bun.argv.indexOf('--modes') + 1]!.split(',') : ['text', 'exact', 'semantic', 'hybrid']) as Mode[];
const DBS: ('sqlite' | 'pg')[] = onlyDb ? [onlyDb] : withPg ? ['sqlite', 'pg'] : ['sqlite'];
const runsFor = (size: number, mode: Mode) => (mode === 'exact' && size > 100_000 ? 5 : size >= 100_000 ? 10 : 30);
const started = Date.now();
const loadAtStart = loadNow();
// --keep DIR and --pg-url: libraries kept between runs (SQLite files in DIR, databases on that
// server), grown to the sizes asked; seeding a million chunks takes longer than searching them.
const keepDir = Bun.argv.includes('--keep') ? Bun.argv[Bun.argv.indexOf('--keep') + 1]! : undefined;
const pgUrlArg = Bun.argv.includes('--pg-url') ? Bun.argv[Bun.argv.indexOf('--pg-url') + 1]! : undefined;
if (keepDir) mkdirSync(keepDir, { recursive: true });
const dir = keepDir ?? mkdtempSync(join(tmpdir(), 'parley-bench-search-'));
const pg = withPg && !pgUrlArg ? await startPostgres() : undefined;
const pgUrl = pgUrlArg ?? pg?.url;
type Result = { db: string; dims: number; size: number; mode: Mode; dbMB?: number; recall?: number; round?: number } & Omit<Measured, 'found'>;
const results: Result[] = [];
const ms = (n: number) => (n >= 100 ? `${Math.round(n).toLocaleString('en')} ms` : `${n.toFixed(1)} ms`);
try {
  for (const kind of DBS) {
    for (const dims of DIMS) {
      const open = await openTarget(kind, dims, dir, pgUrl);
      let have = open.have;
      for (const size of SIZES) {
        if (have > size) throw new Error(`the kept library of ${dims} dimensions has ${have} chunks, more than ${size}: ask for sizes from ${have} up, or remove it`);
        const seedStart = performance.now();
        await grow(open.target, open.handle, dims, have, size);
        have = size;
        const dbMB = open.target.kind === 'sqlite' ? sizeMB(open.target.path) : Math.round(Number((await (open.handle as BunSQL)`SELECT pg_database_size(current_database()) AS n`)[0].n) / 2 ** 20);
        console.log(`${kind}, ${dims} dimensions, ${size.toLocaleString('en')} chunks (+${(size / 10).toLocaleString('en')} of another user): seeded in ${((performance.now() - seedStart) / 1000).toFixed(0)} s${dbMB ? `, ${dbMB} MB on disk` : ''}`);
        await codeKept(open.target.kind === 'sqlite' ? sqliteStore(open.handle as Db) : pgStore(open.handle as BunSQL));
        if (showPlan) await printPlan(open.target, open.handle);
        const targets: { label: string; target: Target; dbMB?: number }[] = [{ label: kind, target: open.target, dbMB }];
        if (layouts && open.target.kind === 'pg') {
          const inRow = await migratedCopy(open.target.url);
          targets.push({ label: 'pg, in row', ...inRow });
          if (showPlan) {
            const handle = connectPg(inRow.target.url, 1);
            await printPlan(inRow.target, handle);
            await handle.close();
          }
        }
        const measured = new Map<string, Measured>();
        // With two layouts, each mode on each in turn, twice: the same moments of the machine's load for both.
        for (const mode of MODES) for (const round of targets.length > 1 ? [0, 1] : [0]) for (const t of targets) {
          const m = runChild({ target: t.target, dims, size, mode, runs: runsFor(size, mode), uniform, indexMb });
          measured.set(`${t.label}:${mode}:${round}`, m);
          // The exact child ran fewer searches past 100,000 chunks: recall over the queries both ran.
          const exact = measured.get(`${t.label}:exact:${round}`) ?? measured.get(`${t.label}:exact:0`);
          const recall = (mode === 'semantic' || mode === 'phases') && exact ? recallOf(exact, m) : undefined;
          const { found: _, ...figures } = m;
          results.push({ db: t.label, dims, size, mode, dbMB: t.dbMB, recall, ...figures, ...(targets.length > 1 ? { round } : {}) });
          if (targets.length > 1) console.log(`  [${t.label}, round ${round + 1}]`);
          if (m.phases) console.log(`  phases, mean ms a search: ${Object.entries(m.phases).map(([k, v]) => `${k} ${v.toFixed(2)}`).join('; ')}`);
          console.log(
            `  ${mode.padEnd(8)} p50 ${ms(m.p50)}, p95 ${ms(m.p95)}; first ${ms(m.firstMs)}; RSS ${m.baseRssMB.toFixed(0)} MB before, peak ${m.peakRssMB.toFixed(0)} MB, ${m.endRssMB.toFixed(0)} MB after (${m.runs} searches, ${m.hits} hits)${recall === undefined ? '' : `; recall@10 ${recall.toFixed(3)}`}; longest stall ${ms(m.stallMs.first)} (first), ${ms(m.stallMs.later)}`,
          );
        }
      }
      await open.close();
    }
  }
} finally {
  await pg?.stop();
  if (!keepDir) rmSync(dir, { recursive: true, force: true });
}

const machine = describeMachine('none (in-process searches)', loadAtStart);
if (write) {
  const benchDir = import.meta.dir;
  const commit = headCommit(benchDir);
  mkdirSync(join(benchDir, 'results'), { recursive: true });
  const name = custom ? `file-search-${uniform ? 'uniform-' : ''}${layouts ? 'layouts-' : ''}${SIZES.join('-')}-${DIMS.join('-')}.json` : 'file-search.json';
  writeFileSync(join(benchDir, 'results', name), JSON.stringify({ startedAt: new Date(started).toISOString(), commit, machine, uniform, results }, null, 2) + '\n');
  console.log(`wrote bench/results/${name}`);
}
if (write && !custom) {
  const benchDir = import.meta.dir;
  const commit = headCommit(benchDir);
  const table = [
    '| Database | Dimensions | Chunks | Full-text p50 | Exact scan p50 / p95 | Semantic p50 / p95 | Exact ÷ semantic | Recall@10 | First search | Semantic longest stall: first / later | Hybrid p50 / p95 | Peak RSS: full-text / exact / semantic / hybrid | Database size |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...DIMS.flatMap((dims) =>
      (withPg ? ['sqlite', 'pg'] : ['sqlite']).flatMap((db) =>
        SIZES.map((size) => {
          const of = (mode: Mode) => results.find((r) => r.db === db && r.dims === dims && r.size === size && r.mode === mode)!;
          const [t, e, s, h] = [of('text'), of('exact'), of('semantic'), of('hybrid')];
          return `| ${db === 'pg' ? 'PostgreSQL' : 'SQLite'} | ${dims} | ${size.toLocaleString('en')} | ${ms(t.p50)} | ${ms(e.p50)} / ${ms(e.p95)} | ${ms(s.p50)} / ${ms(s.p95)} | ${(e.p50 / s.p50).toFixed(0)}× | ${s.recall!.toFixed(3)} | ${ms(s.firstMs)} | ${ms(s.stallMs.first)} / ${ms(s.stallMs.later)} | ${ms(h.p50)} / ${ms(h.p95)} | ${t.peakRssMB.toFixed(0)} / ${e.peakRssMB.toFixed(0)} / ${s.peakRssMB.toFixed(0)} / ${h.peakRssMB.toFixed(0)} MB | ${t.dbMB ? `${t.dbMB.toLocaleString('en')} MB` : ''} |`;
        }),
      ),
    ),
  ].join('\n');
  const begin = '<!-- file-search:begin (written by bench/file-search.ts; edit outside the markers) -->';
  const end = '<!-- file-search:end -->';
  const section = [
    begin,
    `Last full run: ${new Date(started).toISOString()} (${Math.round((Date.now() - started) / 1000)} s), commit \`${commit}\`.`,
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGB} GB RAM, ${machine.kernel}; Bun ${machine.bun}; load average ${machine.loadAverage[0]} at the start, ${loadNow()} at the end.`,
    '',
    table,
    end,
  ].join('\n');
  const path = join(benchDir, 'RESULTS.md');
  const old = readFileSync(path, 'utf8');
  const a = old.indexOf(begin);
  const b = old.indexOf(end);
  writeFileSync(path, a >= 0 && b > a ? old.slice(0, a) + section + old.slice(b + end.length) : `${old.trimEnd()}\n\n${section}\n`);
  console.log('wrote bench/results/file-search.json and its section of bench/RESULTS.md');
}
