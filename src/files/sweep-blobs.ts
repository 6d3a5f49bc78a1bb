import type { AppDeps } from '../deps';
import { takeOrphanBlobs } from './file.store';

const BATCH = 500;

/**
 * Remove the bytes no file names any more: after a file's deletion, and with retention (a user
 * deleted with their files, a conversation's generated images). The rows go first, in their own
 * transaction, then the objects: an object whose removal fails is left over in storage (logged),
 * never a row without its bytes. Returns how many blobs went.
 */
export async function sweepBlobs(deps: Pick<AppDeps, 'store' | 'files' | 'log'>): Promise<number> {
  let removed = 0;
  for (;;) {
    const keys = await deps.store.write((tx) => takeOrphanBlobs(tx, BATCH));
    for (const key of keys) {
      await deps.files.remove(key).catch((err) => deps.log.warn('a file blob could not be removed from storage', { key, cause: String(err) }));
    }
    removed += keys.length;
    if (keys.length < BATCH) return removed;
  }
}

/** After a deletion, without holding up its answer. */
export function sweepBlobsSoon(deps: Pick<AppDeps, 'store' | 'files' | 'log'>): void {
  sweepBlobs(deps).catch((err) => deps.log.error('sweeping file blobs failed', { cause: String(err) }));
}
