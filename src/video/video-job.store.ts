import { and, eq } from 'drizzle-orm';
import type { VideoJobRow } from '../db/schema';
import { exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts) for the jobs `generate_video` starts (docs/video.md).

export interface NewVideoJob {
  responseId: string;
  callKey: string;
  userId: string;
  connectionId: string;
  upstreamId: string;
  model: string;
}

/** The job one call of one response started, if it started one. */
export function* findVideoJob({ db, t }: Tx, responseId: string, callKey: string): Work<VideoJobRow | undefined> {
  return yield* getRow(db.select().from(t.videoJobs).where(and(eq(t.videoJobs.responseId, responseId), eq(t.videoJobs.callKey, callKey))));
}

/** Records a job the server accepted; the call's row when one is there already (the same call on another instance). */
export function* insertVideoJob(tx: Tx, input: NewVideoJob, now: number): Work<VideoJobRow> {
  yield* exec(tx.db.insert(tx.t.videoJobs).values({ id: newId(), ...input, status: 'created', fileId: null, error: null, createdAt: now, updatedAt: now }).onConflictDoNothing());
  return (yield* findVideoJob(tx, input.responseId, input.callKey))!;
}

export function* endVideoJob({ db, t }: Tx, id: string, end: { status: 'completed'; fileId: string } | { status: 'failed'; error: string }, now: number): Work<void> {
  yield* exec(db.update(t.videoJobs).set({ status: end.status, fileId: end.status === 'completed' ? end.fileId : null, error: end.status === 'failed' ? end.error : null, updatedAt: now }).where(eq(t.videoJobs.id, id)));
}
