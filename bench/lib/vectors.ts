/**
 * Vectors for the search benchmarks (bench/file-search.ts, bench/vector-candidates.ts), drawn as
 * embeddings fall: each document has a topic (one of TOPICS random directions), and each chunk is
 * its topic plus noise plus a direction all texts share (embedding models' vectors are not
 * centred); a query is a topic plus more noise. `uniform`: every vector uniformly random on the
 * sphere instead, where no neighbour stands out, the worst case for any index that does not read
 * every vector.
 */
import { normaliseVector } from '../../src/files/embeddings-vectors';

export const TOPICS = 1000;
/** A chunk's noise against its topic, and a query's. */
export const CHUNK_NOISE = 1;
export const QUERY_NOISE = 1.5;

/** A deterministic random stream (mulberry32), so runs draw the same vectors. */
export function randomStream(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function unitVector(rnd: () => number, dims: number): Float32Array {
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) v[i] = rnd() - 0.5;
  return normaliseVector(v);
}

/** The topics' directions and the one all texts share, the same in every process. */
const made = new Map<number, { shared: Float32Array; topics: Float32Array[] }>();
function topicsOf(dims: number) {
  let t = made.get(dims);
  if (!t) {
    const rnd = randomStream(dims * 7 + 1);
    t = { shared: unitVector(rnd, dims), topics: Array.from({ length: TOPICS }, () => unitVector(rnd, dims)) };
    made.set(dims, t);
  }
  return t;
}

/** A unit vector near `topic`: the topic, `noise` times a random unit vector, a third of the shared direction. */
export function nearTopic(rnd: () => number, dims: number, topic: number, noise: number, uniform: boolean): Float32Array {
  if (uniform) return unitVector(rnd, dims);
  const { shared, topics } = topicsOf(dims);
  const n = unitVector(rnd, dims);
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) v[i] = 0.35 * shared[i]! + topics[topic]![i]! + noise * n[i]!;
  return normaliseVector(v);
}
