import { sqliteTable, text, integer, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users';
import { responses } from './responses';

export const VIDEO_JOB_STATUSES = ['created', 'completed', 'failed'] as const;
export type VideoJobStatus = (typeof VIDEO_JOB_STATUSES)[number];

/**
 * A `generate_video` call's job on the videos server (docs/video.md). Written the moment the
 * server accepted the job, keyed by the call (`call_key`: upstream round and call id), so a call
 * run again after a restart polls the job it started instead of paying for a second video; and
 * ended with the file the video became, or the error said. Deleted with the response.
 */
export const videoJobs = sqliteTable(
  'video_jobs',
  {
    id: text('id').primaryKey(),
    responseId: text('response_id')
      .notNull()
      .references(() => responses.id, { onDelete: 'cascade' }),
    callKey: text('call_key').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The connection that runs it (a job is polled where it was made), by id. */
    connectionId: text('connection_id').notNull(),
    /** The videos server's id for the job (`video_…`). */
    upstreamId: text('upstream_id').notNull(),
    model: text('model').notNull(),
    status: text('status', { enum: VIDEO_JOB_STATUSES }).notNull(),
    fileId: text('file_id'),
    error: text('error'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [uniqueIndex('video_jobs_call_idx').on(t.responseId, t.callKey)],
);

export type VideoJobRow = typeof videoJobs.$inferSelect;
