import { and, count, desc, eq, exists, inArray, lt, notExists, or, sql, sum } from 'drizzle-orm';
import type { FileRow } from '../db/schema';
import { allRows, exec, getRow, serializeOn, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/**
 * A blob's key in storage: its hash and the time its row was made. A blob the sweep removes and
 * the same bytes uploaded again get different keys, so the sweep's late removal of the old object
 * can never take the new one's bytes (docs/files.md, "Storage").
 */
export const blobKey = (sha256: string, createdAt: number) => `${sha256}-${createdAt}`;

/** The blob row for these bytes: the existing one (`created: false`), or this one made now. */
export function* claimBlob({ db, t }: Tx, sha256: string, size: number, now: number): Work<{ key: string; created: boolean }> {
  const inserted = yield* allRows(db.insert(t.fileBlobs).values({ sha256, size, createdAt: now }).onConflictDoNothing().returning());
  if (inserted.length) return { key: blobKey(sha256, now), created: true };
  const row = (yield* getRow(db.select().from(t.fileBlobs).where(eq(t.fileBlobs.sha256, sha256))))!;
  return { key: blobKey(row.sha256, row.createdAt), created: false };
}

/** Where a blob's bytes are in storage, and how many there are. */
export function* findBlob({ db, t }: Tx, sha256: string): Work<{ key: string; size: number } | undefined> {
  const row = yield* getRow(db.select().from(t.fileBlobs).where(eq(t.fileBlobs.sha256, sha256)));
  return row && { key: blobKey(row.sha256, row.createdAt), size: row.size };
}

/** How many files a user keeps and their bytes (each file counted, shared bytes too). */
export function* usageOf({ db, t }: Tx, userId: string): Work<{ count: number; bytes: number }> {
  const row = yield* getRow(db.select({ n: count(), bytes: sum(t.files.size) }).from(t.files).where(eq(t.files.userId, userId)));
  return { count: Number(row?.n ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/** Serialises a user's uploads while their quota is checked and the file is added (PostgreSQL; SQLite's writes are serial already). */
export function* lockUserFiles(tx: Tx, userId: string): Work<void> {
  yield* serializeOn(tx, `files:${userId}`);
}

export type NewFile = Omit<FileRow, 'id' | 'createdAt' | 'source' | 'textStatus' | 'textError' | 'textChars' | 'vectorsVersion' | 'origin'> &
  Partial<Pick<FileRow, 'source' | 'textStatus' | 'origin'>>;

/** The user's file of this origin and name (a tool call run again after a restart: src/files/add-file.ts). */
export function* findFileOfOrigin({ db, t }: Tx, userId: string, origin: string, filename: string): Work<FileRow | undefined> {
  return yield* getRow(db.select().from(t.files).where(and(eq(t.files.origin, origin), eq(t.files.filename, filename), eq(t.files.userId, userId))));
}

export function* insertFile({ db, t }: Tx, file: NewFile, now: number): Work<FileRow> {
  return (yield* getRow(db.insert(t.files).values({ ...file, id: newId(), createdAt: now }).returning()))!;
}

export function* findFileById({ db, t }: Tx, id: string): Work<FileRow | undefined> {
  return yield* getRow(db.select().from(t.files).where(eq(t.files.id, id)));
}

/** The documents among `ids` that exist (an assistant's knowledge, src/assistants/assistant-resources.ts). */
export function* findDocumentsByIds({ db, t }: Tx, ids: readonly string[]): Work<FileRow[]> {
  if (!ids.length) return [];
  return yield* allRows(db.select().from(t.files).where(and(inArray(t.files.id, [...ids]), eq(t.files.kind, 'document'))));
}

/** The caller's files, newest first, a page at a time (`before`: the last id of the page before). */
export function* listFilesOfUser({ db, t }: Tx, userId: string, opts: { kind?: 'image' | 'document'; limit: number; before?: FileRow }): Work<FileRow[]> {
  const f = t.files;
  const conditions = [eq(f.userId, userId)];
  if (opts.kind) conditions.push(eq(f.kind, opts.kind));
  if (opts.before) conditions.push(or(lt(f.createdAt, opts.before.createdAt), and(eq(f.createdAt, opts.before.createdAt), lt(f.id, opts.before.id)))!);
  return yield* allRows(db.select().from(f).where(and(...conditions)).orderBy(desc(f.createdAt), desc(f.id)).limit(opts.limit));
}

/**
 * Whether the user may read the file: its owner, or the owner or a writer of a conversation it
 * is attached to.
 */
export function* canReadFile({ db, t }: Tx, file: FileRow, userId: string): Work<boolean> {
  if (file.userId === userId) return true;
  const a = t.fileAttachments;
  const row = yield* getRow(
    db
      .select({ id: a.fileId })
      .from(a)
      .innerJoin(t.conversations, eq(t.conversations.id, a.conversationId))
      .where(
        and(
          eq(a.fileId, file.id),
          or(
            eq(t.conversations.ownerId, userId),
            exists(db.select({ one: sql`1` }).from(t.conversationWriters).where(and(eq(t.conversationWriters.conversationId, a.conversationId), eq(t.conversationWriters.userId, userId)))),
          ),
        ),
      )
      .limit(1),
  );
  return row !== undefined;
}

/**
 * Whether the user may send the file with a message to a conversation (`undefined`: a new one of
 * theirs), attaching it there: its owner may, anywhere they write; anyone else only where it is
 * attached already, the conversation it came through. Reading a file is no leave to hand it on,
 * so a reader's access ends with their access to that conversation (docs/files.md, "Access").
 */
export function* canSendFile({ db, t }: Tx, file: FileRow, userId: string, conversationId: string | undefined): Work<boolean> {
  if (file.userId === userId) return true;
  if (conversationId === undefined) return false;
  const a = t.fileAttachments;
  const row = yield* getRow(db.select({ id: a.fileId }).from(a).where(and(eq(a.fileId, file.id), eq(a.conversationId, conversationId))).limit(1));
  return row !== undefined;
}

export function* attachFiles({ db, t }: Tx, fileIds: string[], conversationId: string, now: number): Work<void> {
  if (!fileIds.length) return;
  yield* exec(db.insert(t.fileAttachments).values(fileIds.map((fileId) => ({ fileId, conversationId, createdAt: now }))).onConflictDoNothing());
}

/** The files attached to a conversation, oldest first. */
export function* listAttachedFiles({ db, t }: Tx, conversationId: string): Work<FileRow[]> {
  const rows = yield* allRows(
    db
      .select({ file: t.files })
      .from(t.fileAttachments)
      .innerJoin(t.files, eq(t.files.id, t.fileAttachments.fileId))
      .where(eq(t.fileAttachments.conversationId, conversationId))
      .orderBy(t.fileAttachments.createdAt),
  );
  return rows.map((r) => r.file);
}

export function* deleteFile({ db, t }: Tx, id: string): Work<boolean> {
  return (yield* allRows(db.delete(t.files).where(eq(t.files.id, id)).returning({ id: t.files.id }))).length > 0;
}

/**
 * Blob rows no file names any more, deleted; their keys returned for the storage to remove
 * afterwards. A file added meanwhile keeps its blob (the foreign key makes this statement fail
 * rather than orphan it; the sweep tries again later).
 */
export function* takeOrphanBlobs({ db, t }: Tx, limit: number): Work<string[]> {
  const b = t.fileBlobs;
  const unreferenced = notExists(db.select({ one: sql`1` }).from(t.files).where(or(eq(t.files.sha256, b.sha256), eq(t.files.thumbSha256, b.sha256))));
  const candidates = yield* allRows(db.select({ sha256: b.sha256 }).from(b).where(unreferenced).limit(limit));
  if (!candidates.length) return [];
  const gone = yield* allRows(
    db
      .delete(b)
      .where(and(inArray(b.sha256, candidates.map((c) => c.sha256)), unreferenced))
      .returning(),
  );
  return gone.map((g) => blobKey(g.sha256, g.createdAt));
}

/** Whether the user has documents to read: their own, or attached to this conversation. */
export function* hasDocuments({ db, t }: Tx, userId: string, conversationId: string): Work<boolean> {
  const f = t.files;
  const attached = exists(db.select({ one: sql`1` }).from(t.fileAttachments).where(and(eq(t.fileAttachments.fileId, f.id), eq(t.fileAttachments.conversationId, conversationId))));
  const row = yield* getRow(db.select({ id: f.id }).from(f).where(and(eq(f.kind, 'document'), or(eq(f.userId, userId), attached))).limit(1));
  return row !== undefined;
}
