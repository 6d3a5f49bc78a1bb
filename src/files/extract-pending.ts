import { rm } from 'node:fs/promises';
import type { AppDeps } from '../deps';
import type { FileRow } from '../db/schema';
import { releaseLease, tryAcquireLease } from '../tasks/lease.store';
import { findBlob } from './file.store';
import { failFileText, listPendingFiles, saveFileText } from './file-text.store';
import { chunkText, ExtractError, extractText } from './extract';
import { tempName } from './receive-upload';
import { fillEmbeddings } from './embeddings-fill';
import { TurnAbandoned } from '../http/turnstile';

/** A chunk's length in characters (about 500 tokens) and what two neighbours share. */
export const CHUNK_CHARS = 2000;
export const CHUNK_OVERLAP = 200;
/** Longer than the extraction's own time limit: only a dead instance's files are taken over. */
const LEASE_MS = 5 * 60_000;

export interface FileTextQueue {
  /** Look for documents waiting for their text, soon; returns at once. */
  wake(): void;
  /** Resolves once the documents waiting now are done (tests, the CLI). */
  idle(): Promise<void>;
}

type Deps = Pick<AppDeps, 'config' | 'store' | 'files' | 'log' | 'now' | 'instanceId' | 'lifecycle' | 'imageConversions' | 'connections' | 'usage'>;

/**
 * Documents into text, one at a time, after their upload answered (docs/files.md, "Documents
 * into text"): extracted in a worker with bounded time and memory, chunked, stored searchable.
 * One at a time keeps a small board's memory to one extraction's. On a cluster, a lease per file
 * keeps two instances from reading the same one; a file whose instance died is taken up by the
 * next pass of another (at its next upload, start or hourly retention).
 *
 * With embeddings set up, a document's chunks are embedded right after its text is saved, and
 * after the waiting documents a pass embeds chunks still without a vector (src/files/
 * embeddings-fill.ts), a slice at a time with the waiting documents read in between. A failed
 * embeddings request stops embedding until the next wake, so a server that is down costs one
 * request a wake-up, not one per document.
 */
export function createFileTextQueue(deps: Deps): FileTextQueue {
  let running: Promise<void> | undefined;
  let again = false;
  const run = async () => {
    const embedding = { down: false };
    do {
      again = false;
      await drain(deps, embedding);
      if (!embedding.down) {
        const filled = await fillEmbeddings(deps);
        embedding.down = filled.failed;
        if (filled.more) again = true;
      }
    } while (again && !deps.lifecycle.signal.aborted);
  };
  return {
    wake() {
      if (running) {
        again = true;
        return;
      }
      running = run()
        .catch((err) => deps.log.error('extracting document text failed', { cause: String(err) }))
        .finally(() => (running = undefined));
    },
    async idle() {
      while (running) await running;
    },
  };
}

async function drain(deps: Deps, embedding: { down: boolean }): Promise<void> {
  const skipped = new Set<string>();
  for (;;) {
    if (deps.lifecycle.signal.aborted) return;
    const pending = (await deps.store.read((tx) => listPendingFiles(tx, skipped.size + 10))).filter((f) => !skipped.has(f.id));
    if (!pending.length) return;
    for (const file of pending) {
      const lease = `file-text:${file.id}`;
      const held = await deps.store.write((tx) => tryAcquireLease(tx, lease, deps.instanceId, LEASE_MS, deps.now()));
      if (!held) {
        skipped.add(file.id); // another instance reads it
        continue;
      }
      try {
        if ((await extractOne(deps, file)) && !embedding.down) embedding.down = (await fillEmbeddings(deps, file.id)).failed;
      } finally {
        await deps.store.write((tx) => releaseLease(tx, lease, deps.instanceId)).catch(() => undefined);
      }
    }
  }
}

/** Whether the document's text was saved. */
async function extractOne(deps: Deps, file: FileRow): Promise<boolean> {
  let local: string | undefined;
  try {
    const blob = await deps.store.read((tx) => findBlob(tx, file.sha256));
    if (!blob) throw new ExtractError('damaged', 'The file\'s bytes are missing.');
    const stored = deps.files.get(blob.key);
    // On disk the worker reads the stored file itself; from a bucket it is fetched first.
    let path = deps.files.kind === 'disk' ? (stored as { name?: string }).name : undefined;
    if (!path) {
      local = await deps.files.tempPath(tempName());
      await Bun.write(local, stored);
      path = local;
    }
    // A read holds up to its memory limit (~140 MB with its worker), an image decode as much: on a
    // small board the two must not overlap, so a read waits for a turn with the images.
    const release = await deps.imageConversions.acquire(deps.lifecycle.signal);
    let extracted;
    try {
      extracted = await extractText({ path, mime: file.mimeType });
    } finally {
      release();
    }
    const chunks = chunkText(extracted.text, { targetChars: CHUNK_CHARS, overlapChars: CHUNK_OVERLAP, pageStarts: extracted.pageStarts });
    await deps.store.write((tx) =>
      saveFileText(
        tx,
        file.id,
        chunks.map((c) => ({ content: c.text, startChar: c.start, page: c.page ?? null })),
        extracted.text.length,
      ),
    );
    return true;
  } catch (err) {
    // Stopping while it waited for its turn: left pending, read at the next start.
    if (err instanceof TurnAbandoned) return false;
    const message = err instanceof ExtractError ? err.message : 'The document could not be read.';
    if (!(err instanceof ExtractError)) deps.log.error('document text extraction failed', { fileId: file.id, cause: String(err) });
    await deps.store.write((tx) => failFileText(tx, file.id, message));
    return false;
  } finally {
    if (local) await rm(local, { force: true });
  }
}
