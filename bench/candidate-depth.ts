/**
 * Recall@10 of the index's candidates at several depths, in memory (no database): how few
 * candidates each dimension needs, since reading the candidates' vectors back is most of a warm
 * search on PostgreSQL (bench/RESULTS.md, "Files: semantic search", where a search's time goes).
 *
 *   node_modules/.bin/bun run bench/candidate-depth.ts [--size 100000] [--dims 384,1536] [--uniform] [--depths 25,50,100]
 *
 * The vectors are drawn as bench/file-search.ts draws them (bench/lib/vectors.ts, 100 chunks a
 * document of one topic); each query's candidates are picked by `NearestCodes` as a search picks
 * them, and recall@10 is the share of the exact top 10 among the 10 best candidates scored exactly.
 */
import { codeWords, dot, writeSignBits } from '../src/files/embeddings-vectors';
import { NearestCodes } from '../src/files/embeddings-nearest';
import { nearTopic, QUERY_NOISE, randomStream, CHUNK_NOISE, TOPICS } from './lib/vectors';

const arg = (name: string, fallback: string) => (Bun.argv.includes(name) ? Bun.argv[Bun.argv.indexOf(name) + 1]! : fallback);
const size = Number(arg('--size', '100000'));
const uniform = Bun.argv.includes('--uniform');
const QUERIES = 50;
const top10 = (scored: { key: number; score: number }[]) => scored.sort((a, b) => b.score - a.score).slice(0, 10).map((s) => s.key);

for (const dims of arg('--dims', '384,1536').split(',').map(Number)) {
  const rnd = randomStream(size * 31 + dims);
  const words = codeWords(dims);
  const vectors: Float32Array[] = [];
  const codes = new Int32Array(size * words);
  const seqs = new Int32Array(size);
  for (let i = 0; i < size; i++) {
    const v = nearTopic(rnd, dims, Math.floor(i / 100) % TOPICS, CHUNK_NOISE, uniform);
    vectors.push(v);
    writeSignBits(v, codes, i * words);
    seqs[i] = i;
  }
  const queries = Array.from({ length: QUERIES }, () => nearTopic(rnd, dims, Math.floor(rnd() * Math.min(TOPICS, size / 100)), QUERY_NOISE, uniform));
  const truth = queries.map((q) => top10(vectors.map((v, key) => ({ key, score: dot(q, v) }))));
  const line: string[] = [];
  for (const depth of arg('--depths', '25,40,50,100').split(',').map(Number)) {
    let hit = 0;
    for (const [i, q] of queries.entries()) {
      const nearest = new NearestCodes(q, depth, Infinity);
      await nearest.add('doc', codes, seqs);
      const found = new Set(top10(nearest.best().map((k) => ({ key: k.seq, score: dot(q, vectors[k.seq]!) }))));
      hit += truth[i]!.filter((k) => found.has(k)).length;
    }
    line.push(`${depth}: ${(hit / (QUERIES * 10)).toFixed(3)}`);
  }
  console.log(`${size.toLocaleString('en')} × ${dims}${uniform ? ' (uniform)' : ''}, recall@10 by candidates read: ${line.join(', ')}`);
}
