/**
 * Would SQLite gain from vectors as raw float32 bytes (a BLOB) instead of base64 text, as
 * PostgreSQL did (migrations/pg/0025_vectors_in_row.sql)? Two tables shaped like `file_chunks`
 * (the (file_id, seq) key, ~2,000 characters of text, a vector of 1,536 floats), one with base64
 * text and one with BLOBs, the same rows; the statement a search reads its 100 candidates with
 * (src/files/embeddings.store.ts, `readChunkVectors`), then decoding and scoring them, timed on
 * both tables alternately, warm.
 *
 *   node_modules/.bin/bun run bench/vector-layout-sqlite.ts [--rows 100000] [--rounds 30]
 */
import { Database } from 'bun:sqlite';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScorer, normaliseVector } from '../src/files/embeddings-vectors';
import { percentile } from './lib/stats';
import { loadNow } from './lib/report';
import { randomStream } from './lib/vectors';

const arg = (name: string, fallback: string) => (Bun.argv.includes(name) ? Bun.argv[Bun.argv.indexOf(name) + 1]! : fallback);
const rows = Number(arg('--rows', '100000'));
const rounds = Number(arg('--rounds', '30'));
const DIMS = 1536;
const PER_FILE = 100;

const dir = mkdtempSync(join(tmpdir(), 'parley-vector-layout-'));
const rnd = randomStream(3);
const word = () => Math.floor(rnd() * 5000).toString(36);
console.log(`load average ${loadNow()}; ${rows.toLocaleString('en')} rows of ${DIMS} dimensions a table`);
try {
  const dbs = { text: new Database(join(dir, 'text.db')), blob: new Database(join(dir, 'blob.db')) };
  for (const [kind, db] of Object.entries(dbs)) {
    db.run('PRAGMA journal_mode = WAL');
    db.run(`CREATE TABLE c (file_id text NOT NULL, seq integer NOT NULL, content text NOT NULL, embedding ${kind === 'text' ? 'text' : 'blob'})`);
    db.run('CREATE UNIQUE INDEX c_key ON c (file_id, seq)');
  }
  const insert = { text: dbs.text.prepare('INSERT INTO c VALUES (?, ?, ?, ?)'), blob: dbs.blob.prepare('INSERT INTO c VALUES (?, ?, ?, ?)') };
  const seedStart = performance.now();
  for (const db of Object.values(dbs)) db.run('BEGIN');
  for (let i = 0; i < rows; i++) {
    const v = normaliseVector(Float32Array.from({ length: DIMS }, () => rnd() - 0.5));
    const bytes = Buffer.from(v.buffer);
    const content = Array.from({ length: 280 }, word).join(' ');
    const key = [`file-${String(Math.floor(i / PER_FILE)).padStart(6, '0')}`, i % PER_FILE] as const;
    insert.text.run(key[0], key[1], content, bytes.toString('base64'));
    insert.blob.run(key[0], key[1], content, bytes);
  }
  for (const db of Object.values(dbs)) db.run('COMMIT');
  const mb = (name: string) => Math.round([name, `${name}-wal`].reduce((n, f) => n + (existsSync(join(dir, f)) ? statSync(join(dir, f)).size : 0), 0) / 2 ** 20);
  console.log(`seeded in ${((performance.now() - seedStart) / 1000).toFixed(0)} s: ${mb('text.db')} MB as text, ${mb('blob.db')} MB as BLOBs`);

  const query = normaliseVector(Float32Array.from({ length: DIMS }, () => rnd() - 0.5));
  const score = createScorer(query);
  const read = (db: Database, keys: [string, number][]) => {
    const values = keys.map(() => '(?, ?)').join(', ');
    const start = performance.now();
    const found = db.query(`WITH k(file_id, seq) AS (VALUES ${values}) SELECT c.file_id, c.seq, c.content, c.embedding FROM k JOIN c ON c.file_id = k.file_id AND c.seq = k.seq`).all(...keys.flat()) as { embedding: string | Uint8Array }[];
    const readMs = performance.now() - start;
    let sum = 0;
    for (const row of found) sum += score(row.embedding) ?? 0;
    return { readMs, totalMs: performance.now() - start, n: found.length, sum };
  };
  const times = { text: { read: [] as number[], total: [] as number[] }, blob: { read: [] as number[], total: [] as number[] } };
  for (let r = 0; r <= rounds; r++) {
    const keys = Array.from({ length: 100 }, () => {
      const i = Math.floor(rnd() * rows);
      return [`file-${String(Math.floor(i / PER_FILE)).padStart(6, '0')}`, i % PER_FILE] as [string, number];
    });
    const order = r % 2 ? (['text', 'blob'] as const) : (['blob', 'text'] as const);
    const got = Object.fromEntries(order.map((kind) => [kind, read(dbs[kind], keys)]));
    if (got.text!.n !== got.blob!.n || Math.abs(got.text!.sum - got.blob!.sum) > 1e-6) throw new Error('the two tables answered differently');
    // The first round warms both up.
    if (r === 0) continue;
    for (const kind of order) {
      times[kind].read.push(got[kind]!.readMs);
      times[kind].total.push(got[kind]!.totalMs);
    }
  }
  const p = (xs: number[]) => percentile(xs, 50);
  console.log(`100 candidates read: p50 ${p(times.text.read).toFixed(2)} ms as text, ${p(times.blob.read).toFixed(2)} ms as BLOBs (${(p(times.text.read) / p(times.blob.read)).toFixed(2)}×)`);
  console.log(`read, decoded and scored: p50 ${p(times.text.total).toFixed(2)} ms as text, ${p(times.blob.total).toFixed(2)} ms as BLOBs (${(p(times.text.total) / p(times.blob.total)).toFixed(2)}×)`);
  for (const db of Object.values(dbs)) db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`load average ${loadNow()} at the end`);
