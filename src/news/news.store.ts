import { and, desc, eq, gte, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { NewsPost } from '../db/schema';
import { allRows, exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts): run by `deps.store` or the CLI's store, on SQLite or PostgreSQL.

/** A post as one user sees it: whether they have read it. */
export interface NewsPostForUser extends NewsPost {
  read: boolean;
}

/** Who is reading: posts older than their account read as read without a row (docs/service-pages.md). */
export interface NewsReader {
  userId: string;
  createdAt: number;
}

export function* createNewsPost({ db, t }: Tx, input: { title: string; body: string }, now: number): Work<NewsPost> {
  return (yield* getRow(db.insert(t.newsPosts).values({ id: newId(), title: input.title, body: input.body, createdAt: now }).returning()))!;
}

/** Its read marks go with it (cascade). */
export function* deleteNewsPost({ db, t }: Tx, id: string): Work<boolean> {
  return (yield* allRows(db.delete(t.newsPosts).where(eq(t.newsPosts.id, id)).returning({ id: t.newsPosts.id }))).length > 0;
}

/** Every post, newest first, with how many users marked it read (the admin's list). */
export function* listNewsPosts({ db, t }: Tx): Work<(NewsPost & { readCount: number })[]> {
  const reads = db
    .select({ postId: t.newsReads.postId, n: sql<number>`count(*)`.mapWith(Number).as('n') })
    .from(t.newsReads)
    .groupBy(t.newsReads.postId)
    .as('reads');
  const rows = yield* allRows(
    db
      .select({ post: t.newsPosts, readCount: sql<number>`coalesce(${reads.n}, 0)`.mapWith(Number) })
      .from(t.newsPosts)
      .leftJoin(reads, eq(reads.postId, t.newsPosts.id))
      .orderBy(desc(t.newsPosts.id)),
  );
  return rows.map((r) => ({ ...r.post, readCount: r.readCount }));
}

/**
 * One page of posts for a reader, newest first: `limit` posts older than the post `before`
 * (ids are time-ordered, so this holds even after that post was deleted), unread ones only
 * with `unreadOnly`.
 */
export function* listNewsForReader(
  { db, t }: Tx,
  reader: NewsReader,
  page: { limit: number; before?: string; unreadOnly?: boolean },
): Work<NewsPostForUser[]> {
  const p = t.newsPosts;
  const r = t.newsReads;
  const rows = yield* allRows(
    db
      .select({ post: p, readAt: r.readAt })
      .from(p)
      .leftJoin(r, and(eq(r.postId, p.id), eq(r.userId, reader.userId)))
      .where(and(page.before === undefined ? undefined : lt(p.id, page.before), page.unreadOnly ? and(isNull(r.readAt), gte(p.createdAt, reader.createdAt)) : undefined))
      .orderBy(desc(p.id))
      .limit(page.limit),
  );
  return rows.map(({ post, readAt }) => ({ ...post, read: readAt !== null || post.createdAt < reader.createdAt }));
}

/** The ids of the reader's unread posts. */
function* unreadIds({ db, t }: Tx, reader: NewsReader): Work<string[]> {
  const p = t.newsPosts;
  const r = t.newsReads;
  const rows = yield* allRows(
    db
      .select({ id: p.id })
      .from(p)
      .leftJoin(r, and(eq(r.postId, p.id), eq(r.userId, reader.userId)))
      .where(and(isNull(r.readAt), gte(p.createdAt, reader.createdAt))),
  );
  return rows.map((row) => row.id);
}

function* existingPostIds({ db, t }: Tx, ids: string[]): Work<string[]> {
  if (!ids.length) return [];
  return (yield* allRows(db.select({ id: t.newsPosts.id }).from(t.newsPosts).where(inArray(t.newsPosts.id, ids)))).map((r) => r.id);
}

export function* countUnreadNews({ db, t }: Tx, reader: NewsReader): Work<number> {
  const p = t.newsPosts;
  const r = t.newsReads;
  const row = yield* getRow(
    db
      .select({ n: sql<number>`count(*)`.mapWith(Number) })
      .from(p)
      .leftJoin(r, and(eq(r.postId, p.id), eq(r.userId, reader.userId)))
      .where(and(isNull(r.readAt), gte(p.createdAt, reader.createdAt))),
  );
  return row!.n;
}

/**
 * Mark posts read: the given ids, or with `ids` undefined every unread post. Ids of posts that
 * do not exist (deleted since the client listed them) are skipped; marking twice changes nothing.
 */
export function* markNewsRead(tx: Tx, reader: NewsReader, ids: string[] | undefined, now: number): Work<void> {
  const { db, t } = tx;
  const postIds = ids === undefined ? yield* unreadIds(tx, reader) : yield* existingPostIds(tx, ids);
  // Bounded statements: a reader who never marked anything may have many posts to mark at once.
  for (let i = 0; i < postIds.length; i += 500) {
    const values = postIds.slice(i, i + 500).map((postId) => ({ userId: reader.userId, postId, readAt: now }));
    yield* exec(db.insert(t.newsReads).values(values).onConflictDoNothing());
  }
}
