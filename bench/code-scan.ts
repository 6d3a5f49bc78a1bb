/**
 * The Hamming scan of a search (`NearestCodes.add`, src/files/embeddings-nearest.ts) against the
 * same class at an earlier commit, on the same codes in the same process, alternated round by
 * round so that the machine's load falls on both alike: step 1 of every warm search, ~half of
 * one at 100,000 × 1,536 (bench/RESULTS.md, "Files: semantic search", where a search's time goes).
 *
 *   node_modules/.bin/bun run bench/code-scan.ts --base COMMIT [--size 100000] [--dims 384,1536] [--rounds 15]
 *
 * The codes are those of vectors drawn as bench/file-search.ts draws them (bench/lib/vectors.ts),
 * 100 chunks a document; 100 candidates (`candidateDepth` at 100,000 chunks).
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { codeWords, writeSignBits } from '../src/files/embeddings-vectors';
import { candidateDepth } from '../src/files/embeddings-index';
import { NearestCodes } from '../src/files/embeddings-nearest';
import { nearTopic, QUERY_NOISE, randomStream, CHUNK_NOISE, TOPICS } from './lib/vectors';
import { percentile } from './lib/stats';
import { loadNow } from './lib/report';

const arg = (name: string, fallback: string) => (Bun.argv.includes(name) ? Bun.argv[Bun.argv.indexOf(name) + 1]! : fallback);
const base = arg('--base', 'HEAD');
const size = Number(arg('--size', '100000'));
const rounds = Number(arg('--rounds', '15'));
const src = resolve(import.meta.dir, '../src/files');
// The earlier class, its relative imports pointed at today's files (the vectors' helpers it uses).
const dir = mkdtempSync(join(import.meta.dir, '.code-scan-'));
const old = execSync(`git show ${base}:src/files/embeddings-nearest.ts`, { cwd: import.meta.dir }).toString().replaceAll("from './", `from '${src}/`);
writeFileSync(join(dir, 'nearest.ts'), old);
const Base = ((await import(join(dir, 'nearest.ts'))) as { NearestCodes: typeof NearestCodes }).NearestCodes;
rmSync(dir, { recursive: true, force: true });

console.log(`load average ${loadNow()}; ${base} against the working tree`);
for (const dims of arg('--dims', '384,1536').split(',').map(Number)) {
  const rnd = randomStream(size * 31 + dims);
  const words = codeWords(dims);
  const docs: { fileId: string; codes: Int32Array; seqs: Int32Array }[] = [];
  for (let d = 0; d < size / 100; d++) {
    const codes = new Int32Array(100 * words);
    for (let i = 0; i < 100; i++) writeSignBits(nearTopic(rnd, dims, d % TOPICS, CHUNK_NOISE, false), codes, i * words);
    docs.push({ fileId: `doc-${d}`, codes, seqs: Int32Array.from({ length: 100 }, (_, i) => i) });
  }
  const depth = candidateDepth(size, 10);
  const scan = async (Class: typeof NearestCodes, query: Float32Array) => {
    const start = performance.now();
    const nearest = new Class(query, depth, Infinity);
    for (const doc of docs) await nearest.add(doc.fileId, doc.codes, doc.seqs);
    const ms = performance.now() - start;
    return { ms, best: nearest.best().map((k) => `${k.fileId}:${k.seq}`).join() };
  };
  const times = { base: [] as number[], now: [] as number[] };
  for (let r = 0; r < rounds + 1; r++) {
    const query = nearTopic(rnd, dims, Math.floor(rnd() * TOPICS), QUERY_NOISE, false);
    // Each round's first scan alternates, so neither always runs on a cache the other warmed.
    const now = r % 2 ? await scan(NearestCodes, query) : undefined;
    const a = await scan(Base, query);
    const b = now ?? (await scan(NearestCodes, query));
    if (a.best !== b.best) throw new Error('the two scans picked different candidates');
    // The first round warms both up.
    if (r === 0) continue;
    times.base.push(a.ms);
    times.now.push(b.ms);
  }
  const [p, q] = [percentile(times.base, 50), percentile(times.now, 50)];
  console.log(`${size.toLocaleString('en')} × ${dims}: scan p50 ${p.toFixed(1)} ms at ${base}, ${q.toFixed(1)} ms now: ${(p / q).toFixed(2)}× (${rounds} rounds each, the same candidates)`);
}
console.log(`load average ${loadNow()} at the end`);
