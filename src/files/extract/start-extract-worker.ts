/**
 * Start the document reader's worker (`smol`: a smaller heap, collected sooner, for a thread that
 * lives for one document). From source its module is loaded as it is. In the executable
 * scripts/build.ts replaces this file: the worker is built apart, without bytecode, and embedded
 * zstd-compressed (2.1 MB of JavaScript as 0.5 MB, where with bytecode it cost ~7 MB), then
 * started from a blob: URL made at each read (bench/RESULTS.md, "Parley's share at 25 MB").
 */
export function startExtractWorker(): Worker {
  return new Worker(new URL('./extract-worker.ts', import.meta.url), { smol: true });
}
