import type { AppDeps } from '../deps';
import { collectNow } from '../http/collect-soon';
import { countVectors, readCodePage, readVectorPage, type ChunkPage, type VectorCount } from './embeddings.store';
import { codesBytes } from './embeddings-index';
import type { NearestCodes } from './embeddings-nearest';
import { codeWords, createCodeReader, createDecoder, writeSignBits } from './embeddings-vectors';

/** Documents whose chunks one statement counts (SQLite binds at most 32,766 values). */
const FILES_PER_COUNT = 1000;
/**
 * Codes one page reads: 8,192 rows are ~2 MB of base64 at 1,536 dimensions (0.5 MB at 384) and
 * as much garbage, read from the codes' index in a few milliseconds.
 */
const CODE_PAGE_ROWS = 8192;
/**
 * Base64 characters of vectors one page reads, where vectors have no code yet (stored before codes
 * were kept, until the background pass codes them): the garbage of such pages is what lifts the
 * process's memory (measured with 10,000 vectors of 1,536 floats, pages of 1, 2, 4 and 8 MB
 * peaked at about 107, 110, 136 and 187 MB).
 */
const VECTOR_PAGE_CHARS = 2 * 1024 * 1024;
const MAX_VECTOR_PAGE_ROWS = 2000;

/** What a row read costs beside its code or vector: the object, its document's id, its number. */
export const ROW_BYTES = 150;

type Deps = Pick<AppDeps, 'store' | 'embeddingsIndex' | 'log' | 'now'>;
type Version = { fileId: string; version: number };

/** How many chunks of each document have a vector of `model` (with or without its code), in id order. */
export async function countCodes(deps: Pick<AppDeps, 'store'>, files: Version[], model: string): Promise<VectorCount[]> {
  const counts: VectorCount[] = [];
  for (let i = 0; i < files.length; i += FILES_PER_COUNT) {
    const ids = files.slice(i, i + FILES_PER_COUNT).map((f) => f.fileId);
    counts.push(...(await deps.store.read((tx) => countVectors(tx, ids, model))));
  }
  return counts;
}

/**
 * The codes of documents the index does not hold (new or changed since, the first search after a
 * start, or over `PARLEY_EMBEDDINGS_INDEX_MB`), read from the codes' index a page at a time and
 * compared by `nearest`; vectors stored before codes were are read and coded on the way. Each
 * document's codes are offered to the index once its last page is read (kept if they fit without
 * dropping a document this search uses). Memory stays at a page and the documents in it, whatever
 * the library's size; other requests run between pages.
 *
 * Documents that do not fit are read again at every search, their codes only (1/32 of their
 * vectors): logged once a process, and shown by the doctor (`state().over`).
 */
export async function readCodes(
  deps: Deps,
  input: { files: Version[]; counts: VectorCount[]; inUse: ReadonlySet<string>; heldBytes: number; model: string; dims: number; nearest: NearestCodes },
): Promise<void> {
  const { model, dims, nearest } = input;
  const words = codeWords(dims);
  const index = deps.embeddingsIndex;
  const readCode = createCodeReader(words);
  const decode = createDecoder(dims);
  const version = new Map(input.files.map((f) => [f.fileId, f.version]));
  const over = { documents: 0, chunks: 0, bytes: 0 };
  const offer = (fileId: string, codes: Int32Array, seqs: Int32Array) => {
    const bytes = codesBytes(fileId, seqs.length, dims);
    if (index.put({ fileId, version: version.get(fileId)!, model, dims, codes, seqs, bytes }, input.inUse) || !seqs.length) return;
    over.documents++;
    over.chunks += seqs.length;
    over.bytes += bytes;
  };
  const counted = new Map(input.counts.map((c) => [c.fileId, c]));
  // A document without vectors of the model (no text, not embedded yet, refused) is held too, empty, so it is not counted again.
  for (const f of input.files) if (!counted.has(f.fileId)) offer(f.fileId, new Int32Array(0), new Int32Array(0));
  type Building = { codes: Int32Array; seqs: Int32Array; n: number; compared: number; fits: boolean; whole: boolean };
  const building = new Map<string, Building>();
  for (let i = 0; i < input.counts.length; i += FILES_PER_COUNT) {
    const counts = input.counts.slice(i, i + FILES_PER_COUNT);
    const uncoded = counts.some((c) => c.uncoded > 0);
    const rows = uncoded ? Math.max(100, Math.min(MAX_VECTOR_PAGE_ROWS, Math.floor(VECTOR_PAGE_CHARS / (Math.ceil((dims * 4) / 3) * 4)))) : CODE_PAGE_ROWS;
    for (const page of planPages(counts.map((c) => ({ fileId: c.fileId, chunks: c.coded + c.uncoded })), rows)) {
      // SQLite answers at once, and awaiting a settled promise lets no other request in: a long
      // read would hold the whole server. Between pages, whatever waits runs first.
      await new Promise((resolve) => setImmediate(resolve));
      const [codes, vectors] = await deps.store.read(function* (tx) {
        return [yield* readCodePage(tx, page, model), uncoded ? yield* readVectorPage(tx, page, model, { uncoded: true }) : []] as const;
      });
      const doc = (fileId: string): Building | undefined => {
        let b = building.get(fileId);
        if (!b) {
          const c = counted.get(fileId);
          const n = c ? c.coded + c.uncoded : 0;
          // A document too large for the whole index is compared a page at a time, never held whole.
          const fits = codesBytes(fileId, n, dims) <= index.capBytes;
          const room = fits ? n : Math.min(n, rows);
          b = { codes: new Int32Array(room * words), seqs: new Int32Array(room), n: 0, compared: 0, fits, whole: fits };
          building.set(fileId, b);
        }
        // More chunks than counted: its text was read again meanwhile (its version moved on, and
        // the next search reads it again); the extra ones wait for that search.
        if (b.n === b.seqs.length) {
          b.whole = false;
          return undefined;
        }
        return b;
      };
      // A long read (the first search of a large library) is collected as it goes, not only after.
      if (index.noteRead(codes.length * (ROW_BYTES + (codes[0]?.code.length ?? 0)) + vectors.length * (ROW_BYTES + (vectors[0]?.embedding.length ?? 0)))) await collectNow();
      for (const row of codes) {
        const b = doc(row.fileId);
        if (b && readCode(row.code, b.codes, b.n * words)) b.seqs[b.n++] = Number(row.seq);
      }
      for (const row of vectors) {
        const v = decode(row.embedding);
        const b = v && doc(row.fileId);
        if (!b) continue;
        writeSignBits(v!, b.codes, b.n * words);
        b.seqs[b.n++] = Number(row.seq);
      }
      for (const [fileId, b] of building) {
        await nearest.add(fileId, b.codes, b.seqs, b.compared, b.n);
        b.compared = b.n;
        if (!b.fits) b.n = b.compared = 0;
      }
      const done = 'fileIds' in page ? page.fileIds : page.toSeq === Number.MAX_SAFE_INTEGER ? [page.fileId] : [];
      for (const fileId of done) {
        const b = building.get(fileId);
        building.delete(fileId);
        if (!b) offer(fileId, new Int32Array(0), new Int32Array(0));
        else if (!b.fits) {
          const n = counted.get(fileId)!;
          over.documents++;
          over.chunks += n.coded + n.uncoded;
          over.bytes += codesBytes(fileId, n.coded + n.uncoded, dims);
        }
        // Every chunk counted was read (the usual case): the arrays are kept as they are, not copied.
        else if (b.whole) offer(fileId, b.n === b.seqs.length ? b.codes : b.codes.slice(0, b.n * words), b.n === b.seqs.length ? b.seqs : b.seqs.slice(0, b.n));
      }
    }
  }
  if (over.documents && index.capBytes > 0 && index.noteOverCap({ ...over, bytes: over.bytes + input.heldBytes }, deps.now())) {
    deps.log.warn('the semantic search index is full: documents that do not fit are read from the database at every search (their codes only, slower); raise PARLEY_EMBEDDINGS_INDEX_MB', {
      documents: over.documents,
      chunks: over.chunks,
      capMb: Math.round(index.capBytes / 2 ** 20),
      neededMb: Math.ceil((over.bytes + input.heldBytes) / 2 ** 20),
    });
  }
}

/**
 * Pages of about `rows` chunks: small files together, a large one in ranges of its chunks. A file
 * that grew since it was counted (its text read again) only makes its page a little longer.
 */
export function* planPages(files: { fileId: string; chunks: number }[], rows: number): Generator<ChunkPage> {
  let group: string[] = [];
  let size = 0;
  for (const f of files) {
    if (f.chunks > rows) {
      for (let from = 0; from < f.chunks; from += rows) yield { fileId: f.fileId, fromSeq: from, toSeq: from + rows >= f.chunks ? Number.MAX_SAFE_INTEGER : from + rows };
      continue;
    }
    if (size + f.chunks > rows) {
      yield { fileIds: group };
      group = [];
      size = 0;
    }
    group.push(f.fileId);
    size += f.chunks;
  }
  if (group.length) yield { fileIds: group };
}
