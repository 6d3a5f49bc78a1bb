/**
 * Turn an uploaded document into text, bounded against hostile files. The work runs in a
 * short-lived worker thread so it never holds the event loop, and the worker is ended when it
 * runs past the time limit or the process's memory grows past the memory limit while it runs.
 * Bun's workers take no heap limit of their own (`resourceLimits` is ignored), so the memory
 * bound is watched from here: the RSS is read every few milliseconds, which a parser inflating
 * a bomb at ~150 MB/s overshoots by a few MB at most. The RSS is the whole process's, so
 * extractions are meant to run one at a time (a turnstile, like image conversion).
 *
 * Resolves with the text, or rejects with an `ExtractError` (the document's fault) or a plain
 * Error (the server's: the worker failed to start or crashed on its own).
 */
import { stat } from 'node:fs/promises';
import { parseMediaType, SUPPORTED_FORMATS_TEXT } from './document-format';
import { ExtractError, formatSize } from './extract-error';
import { DEFAULT_EXTRACT_LIMITS, type ExtractLimits } from './extract-limits';
import type { ExtractReply, ExtractRequest } from './extract-worker';
import { startExtractWorker } from './start-extract-worker';

export interface ExtractedText {
  text: string;
  /** PDF only: the document's page count. */
  pages?: number;
  /** PDF only: where each page's text starts in `text` (index 0 is page 1); for chunkText. */
  pageStarts?: number[];
  /** The text was cut at `maxOutputChars` (or, for a PDF, pages past it were not read). */
  truncated: boolean;
}

const MEMORY_POLL_MS = 10;

export async function extractText(input: { path: string; mime: string }, limits: Partial<ExtractLimits> = {}): Promise<ExtractedText> {
  const bounds = { ...DEFAULT_EXTRACT_LIMITS, ...limits };
  const { format, essence, charset } = parseMediaType(input.mime);
  if (!format)
    throw new ExtractError('unsupported', `Files of type ${essence || 'unknown'} can't be read as text; supported are ${SUPPORTED_FORMATS_TEXT}.`);
  const { size } = await stat(input.path);
  if (size > bounds.maxInputBytes)
    throw new ExtractError('too_large', `The file is ${formatSize(size)}; at most ${formatSize(bounds.maxInputBytes)} can be read.`);
  const reply = await runWorker({ path: input.path, format, charset, limits: bounds, rssBaseline: process.memoryUsage.rss() });
  if (!reply.ok) throw new ExtractError(reply.code, reply.message);
  const { ok: _, ...result } = reply;
  return result;
}

function runWorker(request: ExtractRequest): Promise<ExtractReply> {
  const { timeoutMs, maxMemoryBytes } = request.limits;
  const baseline = request.rssBaseline;
  const worker = startExtractWorker();
  let timer: Timer | undefined;
  let watch: Timer | undefined;
  return new Promise<ExtractReply>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<ExtractReply>) => resolve(event.data);
    worker.onerror = (event) => reject(new Error(`the document reader failed: ${event.message}`));
    timer = setTimeout(
      () => reject(new ExtractError('timeout', `Reading the document took longer than ${Math.round(timeoutMs / 100) / 10} s; it may be too complex, or damaged.`)),
      timeoutMs,
    );
    watch = setInterval(() => {
      if (process.memoryUsage.rss() - baseline > maxMemoryBytes)
        reject(new ExtractError('too_large', `Reading the document needed more than ${formatSize(maxMemoryBytes)} of memory, the most allowed.`));
    }, MEMORY_POLL_MS);
    worker.postMessage(request);
  }).finally(async () => {
    clearTimeout(timer);
    clearInterval(watch);
    await endWorker(worker, baseline);
  });
}

/** Room over the RSS an extraction started at, within which its worker's memory counts as given back. */
const GIVEN_BACK_SLACK = 16 * 1024 * 1024;
const GIVE_BACK_MAX_MS = 1000;

/**
 * End the worker and settle once its memory is gone, so that whatever waits for the extraction's
 * turn (the next document, an image decode: src/files/extract-pending.ts) never starts beside it.
 * A worker told to end runs on until its next check, through any native step it is in (an
 * inflate ran ~100 MB past the memory limit), and its heap is given back over the ~200 ms after
 * its `close` event (measured): so the close is awaited, then the RSS falling back to where the
 * extraction started, for a second at most (other requests may hold memory meanwhile).
 */
async function endWorker(worker: Worker, baseline: number): Promise<void> {
  const closed = new Promise((resolve) => worker.addEventListener('close', resolve, { once: true }));
  worker.terminate();
  await closed;
  const until = performance.now() + GIVE_BACK_MAX_MS;
  while (process.memoryUsage.rss() > baseline + GIVEN_BACK_SLACK && performance.now() < until) await Bun.sleep(MEMORY_POLL_MS);
}
