import { rm } from 'node:fs/promises';
import type { AppDeps } from '../deps';
import type { FileRow } from '../db/schema';
import { AppError } from '../http/errors';
import { ACCEPTED, sniffFile, sniffVideo } from './sniff-file';
import { cleanImage } from './clean-image';
import { claimBlob, findBlob, findFileOfOrigin, insertFile, lockUserFiles, usageOf } from './file.store';
import type { Tx, Work } from '../db/work';
import { tempName } from './receive-upload';
import { cleanFilename } from './clean-filename';

/** Bytes read from the end of a file for sniffing (a ZIP's directory of entries). */
const TAIL_BYTES = 64 * 1024;

/** Refuses before anything is read when the user already keeps as many files as allowed. */
export async function checkRoomForOneMore(deps: AppDeps, userId: string): Promise<void> {
  const usage = await deps.store.read((tx) => usageOf(tx, userId));
  if (usage.count >= deps.config.filesMaxPerUser) throw quotaError(`You keep ${usage.count} files, the most allowed (PARLEY_FILES_MAX_PER_USER). Delete some first.`);
}

/**
 * Make a received file the user's: clean its name (clean-filename.ts: every file's name passes
 * here), sniff it (refusing what Parley does not take), re-encode an image without its metadata
 * and make its thumbnail, store the bytes under their hash, then check the quota and add the row
 * in one transaction. The temp file is gone afterwards.
 *
 * `origin` names what made a generated file (a tool call): the user's file of that origin and
 * name, when there is one, is answered instead of a second (the call run again after a restart
 * that came between keeping its files and recording its output).
 */
export async function addFile(
  deps: AppDeps,
  userId: string,
  received: { tempPath: string; size: number; sha256: string; filename: string; head: Uint8Array },
  source: 'upload' | 'generated' = 'upload',
  origin?: string,
): Promise<FileRow> {
  const written: string[] = [];
  const filename = cleanFilename(received.filename);
  const kept = (tx: Tx) => findFileOfOrigin(tx, userId, origin!, filename);
  try {
    const earlier = origin ? await deps.store.read(kept) : undefined;
    if (earlier) return earlier;
    const tail = received.size > received.head.length ? await Bun.file(received.tempPath).slice(Math.max(0, received.size - TAIL_BYTES)).bytes() : received.head;
    const sniffed = sniffFile(received.head, tail, filename) ?? (source === 'generated' ? sniffVideo(received.head) : undefined);
    if (!sniffed) throw new AppError('UNSUPPORTED_MEDIA_TYPE', { message: `Parley takes ${ACCEPTED}; this file is none of them (decided from its content).` });

    let main = { path: received.tempPath, size: received.size, sha256: received.sha256 };
    let thumb: typeof main | undefined;
    let dims: { width: number | null; height: number | null } = { width: null, height: null };
    let mimeType: string = sniffed.mimeType;
    if (sniffed.kind === 'image') {
      const release = await deps.imageConversions.acquire();
      let cleaned;
      try {
        cleaned = await cleanImage(await Bun.file(received.tempPath).bytes(), sniffed.header, deps.config.imageMaxPixels);
      } finally {
        release();
      }
      if ('error' in cleaned) throw new AppError('BAD_REQUEST', { message: `The image was refused: ${cleaned.error}.` });
      await rm(received.tempPath, { force: true });
      main = await writeTemp(deps, cleaned.bytes);
      written.push(main.path);
      thumb = await writeTemp(deps, cleaned.thumb);
      written.push(thumb.path);
      dims = { width: cleaned.width, height: cleaned.height };
      mimeType = cleaned.mimeType;
    }

    const now = deps.now();
    // The bytes go to storage under a key of this moment first; if the same bytes are stored
    // already, the transaction below says so and this copy is removed again.
    await deps.files.put(`${main.sha256}-${now}`, main.path);
    if (thumb) await deps.files.put(`${thumb.sha256}-${now}`, thumb.path);
    const { file, duplicates } = await deps.store.write(function* (tx) {
      yield* lockUserFiles(tx, userId);
      // Kept meanwhile (the call run twice at once): that file, and ours stored for nothing.
      const meanwhile = origin ? yield* kept(tx) : undefined;
      if (meanwhile) return { file: meanwhile, duplicates: yield* unclaimed(tx, thumb ? [main, thumb] : [main], now) };
      const usage = yield* usageOf(tx, userId);
      if (usage.count >= deps.config.filesMaxPerUser) throw quotaError(`You keep ${usage.count} files, the most allowed (PARLEY_FILES_MAX_PER_USER). Delete some first.`);
      if (usage.bytes + main.size > deps.config.filesQuotaBytes)
        throw quotaError(`This file (${main.size} bytes) would take your files past your quota: ${usage.bytes} of ${deps.config.filesQuotaBytes} bytes are used (PARLEY_FILES_QUOTA_BYTES).`);
      const duplicates: string[] = [];
      // A copy stored already is kept, and ours goes; unless it is ours (the same bytes added in
      // the same millisecond: one key for both).
      for (const b of thumb ? [main, thumb] : [main]) {
        const blob = yield* claimBlob(tx, b.sha256, b.size, now);
        if (!blob.created && blob.key !== `${b.sha256}-${now}`) duplicates.push(`${b.sha256}-${now}`);
      }
      const file = yield* insertFile(
        tx,
        {
          userId,
          sha256: main.sha256,
          filename,
          mimeType,
          kind: sniffed.kind,
          size: main.size,
          ...dims,
          thumbSha256: thumb?.sha256 ?? null,
          source,
          origin: origin ?? null,
          // Documents are turned into text after the upload answers (src/files/extract-pending.ts); a video has none.
          textStatus: sniffed.kind === 'document' && !('video' in sniffed) ? 'pending' : 'none',
        },
        now,
      );
      return { file, duplicates };
    }).catch(async (err) => {
      // Nothing refers to what was just stored: take it back, unless a blob row names that very
      // key (the same bytes stored by another upload in the same millisecond).
      for (const b of thumb ? [main, thumb] : [main]) {
        const key = `${b.sha256}-${now}`;
        const stored = await deps.store.read((tx) => findBlob(tx, b.sha256));
        if (stored?.key !== key) await deps.files.remove(key);
      }
      throw err;
    });
    await Promise.all(duplicates.map((key) => deps.files.remove(key)));
    return file;
  } finally {
    await Promise.all([received.tempPath, ...written].map((p) => rm(p, { force: true })));
  }
}

/** The keys just stored under `now` that no blob row names: nothing will refer to them. */
function* unclaimed(tx: Tx, stored: { sha256: string }[], now: number): Work<string[]> {
  const keys: string[] = [];
  for (const b of stored) if ((yield* findBlob(tx, b.sha256))?.key !== `${b.sha256}-${now}`) keys.push(`${b.sha256}-${now}`);
  return keys;
}

/** Bytes made here (a cleaned image, a thumbnail, a generated image) into a temp file, hashed. */
export async function writeTemp(deps: AppDeps, bytes: Uint8Array): Promise<{ path: string; size: number; sha256: string }> {
  const path = await deps.files.tempPath(tempName());
  await Bun.write(path, bytes);
  return { path, size: bytes.length, sha256: new Bun.CryptoHasher('sha256').update(bytes).digest('hex') };
}

const quotaError = (message: string) => new AppError('CONFLICT', { message, data: { reason: 'quota' } });
