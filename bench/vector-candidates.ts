/**
 * The ways to search 100,000 vectors, measured on the same vectors in the same run before one was
 * chosen (docs/files.md, "Semantic search"; bench/RESULTS.md, "Files: semantic search"):
 *
 *   node_modules/.bin/bun run bench/vector-candidates.ts [--size 100000] [--dims 384,1536] [--uniform] [--only exact,bits]
 *
 * (`cd bench && npm install` first: sqlite-vec and usearch are benchmark-only dependencies.)
 *
 * The vectors (bench/lib/vectors.ts, 100 a document of one topic, as bench/file-search.ts draws
 * them) are written to a SQLite file as float32 BLOBs keyed by rowid, which every candidate reads
 * from, each in a child process of its own so that its peak RSS is its own:
 * - exact: every vector in one Float32Array, a dot product each: the truth, and the floor of an exact scan;
 * - bits: each vector's sign bits in memory, candidates as Parley picks them (`NearestCodes`,
 *   `candidateDepth`: 100 at 100,000 vectors, one in a thousand past that) read back from SQLite
 *   and scored exactly;
 * - int8: each vector scaled to bytes in memory, an integer dot product each, the 40 best read
 *   back and scored exactly;
 * - sqlite-vec float / bit: the extension's `vec0` table of float[D] (its exact k-nearest), or of
 *   bit[D] with the 100 nearest read back and scored exactly;
 * - hnsw f32 / i8: usearch's HNSW graph (connectivity 16, expansion 128 to add, 64 to search),
 *   of floats or of bytes, built in the child (its time given apart).
 * Each runs 20 queries after one to warm up; recall@10 is against the exact child's top 10s.
 */
import { Database } from 'bun:sqlite';
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeWords, dot, writeSignBits } from '../src/files/embeddings-vectors';
import { candidateDepth } from '../src/files/embeddings-index';
import { NearestCodes } from '../src/files/embeddings-nearest';
import { nearTopic, QUERY_NOISE, randomStream, CHUNK_NOISE, TOPICS } from './lib/vectors';
import { percentile } from './lib/stats';
import { describeMachine, loadNow } from './lib/report';

const CANDIDATES = ['exact', 'bits', 'int8', 'sqlite-vec-float', 'sqlite-vec-bit', 'hnsw-f32', 'hnsw-i8'] as const;
type Candidate = (typeof CANDIDATES)[number];
type Spec = { path: string; dims: number; size: number; candidate: Candidate; uniform: boolean };
type Measured = { p50: number; p95: number; buildMs: number; peakRssMB: number; found: number[][] };
const QUERIES = 20;
const BITS_DEPTH = 100;
const INT8_DEPTH = 40;

const statusMB = (field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024;
const asFloats = (blob: Uint8Array) => new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);

function queries(spec: Spec): Float32Array[] {
  const rnd = randomStream(99);
  return Array.from({ length: QUERIES + 1 }, () => nearTopic(rnd, spec.dims, Math.floor(rnd() * Math.min(TOPICS, spec.size / 100)), QUERY_NOISE, spec.uniform));
}

/** Every stored vector, in pages, to `each(id, vector)`. */
function readAll(db: Database, each: (id: number, v: Float32Array) => void): void {
  const page = db.query('SELECT id, vec FROM v WHERE id > ? ORDER BY id LIMIT 2000');
  for (let after = 0; ; ) {
    const rows = page.all(after) as { id: number; vec: Uint8Array }[];
    if (!rows.length) return;
    for (const r of rows) each(r.id, asFloats(r.vec));
    after = rows.at(-1)!.id;
  }
}

/** The best `k` of `scores`' ids, best first. */
function topIds(ids: ArrayLike<number>, scores: ArrayLike<number>, k: number): number[] {
  return Array.from({ length: ids.length }, (_, i) => i)
    .sort((a, b) => scores[b]! - scores[a]!)
    .slice(0, k)
    .map((i) => ids[i]!);
}

/** Candidates read back from SQLite and scored exactly: the top 10 ids. */
function rerank(db: Database, query: Float32Array, ids: number[]): number[] {
  const rows = db.query(`SELECT id, vec FROM v WHERE id IN (${ids.map(() => '?').join(',')})`).all(...ids) as { id: number; vec: Uint8Array }[];
  return topIds(
    rows.map((r) => r.id),
    rows.map((r) => dot(query, asFloats(r.vec))),
    10,
  );
}

/** A search that scores every vector of `all` (floats or bytes) against the query, then `pick`s from the scores. */
function scanAll(all: Float32Array | Int8Array, dims: number, pick: (q: Float32Array, ids: Int32Array, scores: Float32Array) => number[]): (q: Float32Array) => number[] {
  const size = all.length / dims;
  const scores = new Float32Array(size);
  const ids = Int32Array.from({ length: size }, (_, i) => i + 1);
  return (q) => {
    for (let n = 0; n < size; n++) {
      let s = 0;
      for (let i = 0, o = n * dims; i < dims; i++) s += q[i]! * all[o + i]!;
      scores[n] = s;
    }
    return pick(q, ids, scores);
  };
}

async function measure(spec: Spec): Promise<Measured> {
  const db = new Database(spec.path, { readonly: spec.candidate !== 'sqlite-vec-float' && spec.candidate !== 'sqlite-vec-bit' });
  const { dims, size } = spec;
  const buildStart = performance.now();
  let search: (q: Float32Array) => number[] | Promise<number[]>;
  if (spec.candidate === 'exact') {
    const all = new Float32Array(size * dims);
    readAll(db, (id, v) => all.set(v, (id - 1) * dims));
    search = scanAll(all, dims, (q, ids, scores) => topIds(ids, scores, 10));
  } else if (spec.candidate === 'bits') {
    const words = codeWords(dims);
    const codes = new Int32Array(size * words);
    readAll(db, (id, v) => writeSignBits(v, codes, (id - 1) * words));
    const seqs = Int32Array.from({ length: size }, (_, i) => i + 1);
    search = async (q) => {
      const nearest = new NearestCodes(q, candidateDepth(size, 10));
      await nearest.add('all', codes, seqs);
      return rerank(
        db,
        q,
        nearest.best().map((k) => k.seq),
      );
    };
  } else if (spec.candidate === 'int8') {
    const bytes = new Int8Array(size * dims);
    readAll(db, (id, v) => {
      let max = 0;
      for (const x of v) max = Math.max(max, Math.abs(x));
      for (let i = 0; i < dims; i++) bytes[(id - 1) * dims + i] = Math.round((v[i]! / (max || 1)) * 127);
    });
    search = scanAll(bytes, dims, (q, ids, scores) => rerank(db, q, topIds(ids, scores, INT8_DEPTH)));
  } else if (spec.candidate.startsWith('sqlite-vec')) {
    const sqliteVec = await import(join(import.meta.dir, 'node_modules', 'sqlite-vec', 'index.mjs'));
    sqliteVec.load(db);
    const bit = spec.candidate === 'sqlite-vec-bit';
    db.run('DROP TABLE IF EXISTS vv');
    db.run(`CREATE VIRTUAL TABLE vv USING vec0(embedding ${bit ? 'bit' : 'float'}[${dims}])`);
    const insert = db.query(bit ? 'INSERT INTO vv(rowid, embedding) VALUES (?, vec_quantize_binary(?))' : 'INSERT INTO vv(rowid, embedding) VALUES (?, ?)');
    db.transaction(() => readAll(db, (id, v) => insert.run(id, new Uint8Array(v.buffer, v.byteOffset, v.byteLength))))();
    const knn = db.query(
      bit
        ? `SELECT rowid AS id FROM vv WHERE embedding MATCH vec_quantize_binary(?) AND k = ${BITS_DEPTH}`
        : 'SELECT rowid AS id FROM vv WHERE embedding MATCH ? AND k = 10 ORDER BY distance',
    );
    search = (q) => {
      const ids = (knn.all(new Uint8Array(q.buffer, q.byteOffset, q.byteLength)) as { id: number }[]).map((r) => r.id);
      return bit ? rerank(db, q, ids) : ids;
    };
  } else {
    const { Index } = await import(join(import.meta.dir, 'node_modules', 'usearch', 'javascript', 'dist', 'cjs', 'usearch.js'));
    const index = new Index({ dimensions: dims, metric: 'ip', quantization: spec.candidate === 'hnsw-i8' ? 'i8' : 'f32', connectivity: 16, expansion_add: 128, expansion_search: 64 });
    index.reserve?.(size);
    const batchKeys: bigint[] = [];
    const batch: Float32Array[] = [];
    const flush = () => {
      if (!batch.length) return;
      const flat = new Float32Array(batch.length * dims);
      batch.forEach((v, i) => flat.set(v, i * dims));
      index.add(BigUint64Array.from(batchKeys), flat);
      batch.length = 0;
      batchKeys.length = 0;
    };
    readAll(db, (id, v) => {
      batchKeys.push(BigInt(id));
      batch.push(Float32Array.from(v));
      if (batch.length === 2000) flush();
    });
    flush();
    search = (q) => Array.from(index.search(q, 10).keys as BigUint64Array, Number);
  }
  const buildMs = performance.now() - buildStart;
  const found: number[][] = [];
  const times: number[] = [];
  for (const [i, q] of queries(spec).entries()) {
    const start = performance.now();
    const ids = await search(q);
    if (i > 0) {
      times.push(performance.now() - start);
      found.push(ids);
    }
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95), buildMs, peakRssMB: statusMB('VmHWM'), found };
}

if (Bun.argv.includes('--child')) {
  console.log(JSON.stringify(await measure(JSON.parse(Bun.argv[Bun.argv.indexOf('--child') + 1]!) as Spec)));
  process.exit(0);
}

const arg = (name: string) => (Bun.argv.includes(name) ? Bun.argv[Bun.argv.indexOf(name) + 1]! : undefined);
const size = Number(arg('--size') ?? 100_000);
const uniform = Bun.argv.includes('--uniform');
const dimsList = (arg('--dims') ?? '384,1536').split(',').map(Number);
// The exact candidate comes first whatever is asked: it is what the others are measured against.
const only: readonly Candidate[] | undefined = arg('--only') ? (['exact', ...arg('--only')!.split(',').filter((c) => c !== 'exact')] as Candidate[]) : undefined;
const dir = mkdtempSync(join(tmpdir(), 'parley-bench-candidates-'));
const loadAtStart = loadNow();
const ms = (n: number) => (n >= 100 ? `${Math.round(n).toLocaleString('en')} ms` : `${n.toFixed(1)} ms`);
const rows: string[] = [];
try {
  for (const dims of dimsList) {
    const path = join(dir, `v-${dims}.db`);
    const db = new Database(path);
    db.run('CREATE TABLE v (id INTEGER PRIMARY KEY, vec BLOB NOT NULL)');
    const insert = db.query('INSERT INTO v (id, vec) VALUES (?, ?)');
    const rnd = randomStream(size * 31 + dims);
    db.transaction(() => {
      for (let n = 1; n <= size; n++) {
        const v = nearTopic(rnd, dims, Math.floor((n - 1) / 100) % TOPICS, CHUNK_NOISE, uniform);
        insert.run(n, new Uint8Array(v.buffer));
      }
    })();
    db.close();
    let truth: number[][] = [];
    let exactP50 = NaN;
    for (const candidate of only ?? CANDIDATES) {
      const spec: Spec = { path, dims, size, candidate, uniform };
      let m: Measured;
      try {
        const out = execSync(`${JSON.stringify(process.execPath)} run ${JSON.stringify(import.meta.path)} --child ${JSON.stringify(JSON.stringify(spec))}`, { maxBuffer: 1 << 24 });
        m = JSON.parse(out.toString().trim().split('\n').at(-1)!) as Measured;
      } catch (err) {
        console.log(`  ${candidate}: failed (${String(err).split('\n')[0]})`);
        continue;
      }
      if (candidate === 'exact') {
        truth = m.found;
        exactP50 = m.p50;
      }
      let hit = 0;
      truth.forEach((t, i) => (hit += t.filter((id) => m.found[i]!.includes(id)).length));
      const recall = hit / (truth.length * 10);
      const line = `| ${candidate} | ${dims} | ${ms(m.p50)} / ${ms(m.p95)} | ${(exactP50 / m.p50).toFixed(1)}× | ${recall.toFixed(3)} | ${m.peakRssMB.toFixed(0)} MB | ${ms(m.buildMs)} |`;
      rows.push(line);
      console.log(line);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const machine = describeMachine('none (in-process searches)', loadAtStart);
console.log(`\n${size.toLocaleString('en')} vectors${uniform ? ', uniformly random' : ''}; ${machine.cpu}, ${machine.cores} cores; load average ${machine.loadAverage[0]} at the start, ${loadNow()} at the end.`);
console.log('| Candidate | Dimensions | p50 / p95 | Exact ÷ it | Recall@10 | Peak RSS | Load or build |\n|---|---|---|---|---|---|---|');
console.log(rows.join('\n'));

