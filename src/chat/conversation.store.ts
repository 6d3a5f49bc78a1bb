import { and, asc, desc, eq, gte, inArray, lt, or, sql } from 'drizzle-orm';
import { conversationItems, conversations, type Conversation, type ConversationItem } from '../db/schema';
import { newId } from '../ids';
import { preparedFor } from '../db/prepared';
import { allRows, countRows, exec, getRow, hotOr, type Tx, type Work } from '../db/work';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike. The hot
// ones run SQLite statements prepared once (`hot`, through `hotOr`) and the builder on PostgreSQL.

export function* createConversation(tx: Tx, input: { ownerId: string; title?: string; studyMode?: boolean; assistantId?: string | null }, now = Date.now()): Work<Conversation> {
  // Every first chat turn waits for this before its request goes upstream: a prepared statement,
  // not drizzle's per-call SQL and RETURNING (bench/RESULTS.md, the real-model figure).
  const row: Conversation = { id: newId(), ownerId: input.ownerId, title: input.title ?? '', studyMode: input.studyMode ?? false, createdAt: now, updatedAt: now, nextPosition: 0, importedBytes: null, assistantId: input.assistantId ?? null };
  yield* hotOr(
    tx,
    (db) => void hot(db).insertConversation.run(row.id, row.ownerId, row.title, row.studyMode ? 1 : 0, now),
    () => exec(tx.db.insert(tx.t.conversations).values(row)),
  );
  // Rare beside the plain insert above, which stays as it was (a statement prepared once).
  if (row.assistantId && tx.dialect === 'sqlite') yield* setConversationAssistant(tx, row.id, row.assistantId);
  return row;
}

/** The assistant the conversation's next turns use (null: Parley itself). */
export function* setConversationAssistant({ db, t }: Tx, conversationId: string, assistantId: string | null): Work<void> {
  yield* exec(db.update(t.conversations).set({ assistantId }).where(eq(t.conversations.id, conversationId)));
}

// On the hot path of every conversation operation and every message: prepared once
// (src/db/prepared.ts).
const hot = preparedFor((db) => {
  return {
    byId: db.select().from(conversations).where(eq(conversations.id, sql.placeholder('id'))).prepare(),
    items: db.select().from(conversationItems).where(eq(conversationItems.conversationId, sql.placeholder('id'))).orderBy(asc(conversationItems.position)).prepare(),
    // Plain SQLite rather than drizzle's prepared query: no placeholder filling or row mapping
    // for a yes/no answer, which measurably matters on a read that is all overhead.
    writable: db.$client.prepare<{ ok: number }, [string, string]>(
      'SELECT 1 AS ok FROM conversations c WHERE c.id = ?1 AND (c.owner_id = ?2 OR EXISTS (SELECT 1 FROM conversation_writers w WHERE w.conversation_id = c.id AND w.user_id = ?2))',
    ),
    // Appending (a group message is the hottest write path): plain statements, not drizzle, which
    // would fill placeholders and map the row back (parsing the `parts` JSON just written). The
    // conversation hands out the position (`next_position`) and is touched in one UPDATE, the
    // position is read back with a key lookup, and the insert has no RETURNING: RETURNING makes
    // SQLite open a statement journal, which also flushes the full-text index's pending terms to
    // disk (bench/RESULTS.md, changes 14 and 24).
    takePosition: db.$client.prepare<never, [string, number]>('UPDATE conversations SET updated_at = ?2, next_position = next_position + 1 WHERE id = ?1'),
    takenPosition: db.$client.prepare<{ position: number }, [string]>('SELECT next_position - 1 AS position FROM conversations WHERE id = ?1'),
    insertConversation: db.$client.prepare<never, [string, string, string, number, number]>(
      'INSERT INTO conversations (id, owner_id, title, study_mode, created_at, updated_at, next_position) VALUES (?1, ?2, ?3, ?4, ?5, ?5, 0)',
    ),
    // A group chat's items stay out of the history index (`searchable`, migrations/0011), whichever
    // path appends them: the conversation says, not the caller.
    insertItem: db.$client.prepare<never, [string, string, number, string, string, string, string | null, number]>(
      `INSERT INTO conversation_items (id, conversation_id, position, role, content, parts, author_id, created_at, searchable)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NOT EXISTS (SELECT 1 FROM group_chats WHERE conversation_id = ?2))`,
    ),
  };
});

export function* findConversationById(tx: Tx, id: string): Work<Conversation | undefined> {
  const { db, t } = tx;
  return yield* hotOr(tx, (d) => hot(d).byId.get({ id }), () => getRow(db.select().from(t.conversations).where(eq(t.conversations.id, id))));
}

/** Owner or writer. One indexed lookup: this sits on the hot path of every write. */
export function* canWriteConversation(tx: Tx, conversationId: string, userId: string): Work<boolean> {
  const { db, t } = tx;
  return yield* hotOr(
    tx,
    (d) => hot(d).writable.get(conversationId, userId) !== null,
    function* () {
      const row = yield* getRow(
        db
          .select({ id: t.conversations.id })
          .from(t.conversations)
          .where(
            and(
              eq(t.conversations.id, conversationId),
              or(
                eq(t.conversations.ownerId, userId),
                sql`EXISTS (SELECT 1 FROM ${t.conversationWriters} WHERE ${t.conversationWriters.conversationId} = ${t.conversations.id} AND ${t.conversationWriters.userId} = ${userId})`,
              ),
            ),
          ),
      );
      return row !== undefined;
    },
  );
}

export function* addWriter({ db, t }: Tx, conversationId: string, userId: string, now = Date.now()): Work<void> {
  yield* exec(db.insert(t.conversationWriters).values({ conversationId, userId, createdAt: now }).onConflictDoNothing());
}

export function* removeWriter({ db, t }: Tx, conversationId: string, userId: string): Work<void> {
  yield* exec(db.delete(t.conversationWriters).where(and(eq(t.conversationWriters.conversationId, conversationId), eq(t.conversationWriters.userId, userId))));
}

/**
 * Append an item at the end of a conversation. Run it inside the write transaction when several
 * writers race: taking the position locks the conversation's row, so nobody takes the same
 * position in between.
 */
export function* appendItem(
  tx: Tx,
  input: { conversationId: string; role: ConversationItem['role']; content: string; parts?: unknown[]; authorId?: string | null },
  now = Date.now(),
): Work<Omit<ConversationItem, 'searchable'>> {
  const id = newId();
  const parts = input.parts ?? [];
  const authorId = input.authorId ?? null;
  const { db, t } = tx;
  const position = yield* hotOr(
    tx,
    (d) => {
      const stmts = hot(d);
      // No conversation: no position, and the insert fails on its foreign key as it always did.
      const position = stmts.takePosition.run(input.conversationId, now).changes ? stmts.takenPosition.get(input.conversationId)!.position : 0;
      stmts.insertItem.run(id, input.conversationId, position, input.role, input.content, JSON.stringify(parts), authorId, now);
      return position;
    },
    function* () {
      const taken = yield* getRow(
        db
          .update(t.conversations)
          .set({ updatedAt: now, nextPosition: sql`${t.conversations.nextPosition} + 1` })
          .where(eq(t.conversations.id, input.conversationId))
          .returning({ next: t.conversations.nextPosition }),
      );
      const position = taken ? taken.next - 1 : 0;
      const searchable = sql`NOT EXISTS (SELECT 1 FROM ${t.groupChats} WHERE ${t.groupChats.conversationId} = ${input.conversationId})`;
      yield* exec(
        db.insert(t.conversationItems).values({ id, conversationId: input.conversationId, position, role: input.role, content: input.content, parts, authorId, createdAt: now, searchable: searchable as unknown as boolean }),
      );
      return position;
    },
  );
  return { id, conversationId: input.conversationId, position, role: input.role, content: input.content, parts, authorId, createdAt: now };
}

/** A conversation's items in order: every AI turn reads them before its request goes upstream (prepared). */
export function* listItems(tx: Tx, conversationId: string): Work<ConversationItem[]> {
  const { db, t } = tx;
  return yield* hotOr(
    tx,
    (d) => hot(d).items.all({ id: conversationId }),
    () => allRows(db.select().from(t.conversationItems).where(eq(t.conversationItems.conversationId, conversationId)).orderBy(asc(t.conversationItems.position))),
  );
}

export function* findItemById({ db, t }: Tx, id: string): Work<ConversationItem | undefined> {
  return yield* getRow(db.select().from(t.conversationItems).where(eq(t.conversationItems.id, id)));
}

/** Delete `item` and every later item of its conversation (run with `store.write`); returns how many went. */
export function* truncateFromItem({ db, t }: Tx, item: ConversationItem, now = Date.now()): Work<number> {
  const gone = yield* allRows(
    db
      .delete(t.conversationItems)
      .where(and(eq(t.conversationItems.conversationId, item.conversationId), gte(t.conversationItems.position, item.position)))
      .returning({ id: t.conversationItems.id }),
  );
  // Everything from `item` on is gone: the next item takes its place.
  yield* exec(db.update(t.conversations).set({ updatedAt: now, nextPosition: item.position }).where(eq(t.conversations.id, item.conversationId)));
  return gone.length;
}

/** Removes the conversation; items, writers, branches, responses, events, widgets and bookmarks follow by cascade. */
export function* deleteConversation({ db, t }: Tx, id: string): Work<boolean> {
  return (yield* allRows(db.delete(t.conversations).where(eq(t.conversations.id, id)).returning({ id: t.conversations.id }))).length > 0;
}

export function* updateConversation({ db, t }: Tx, id: string, patch: { title?: string; studyMode?: boolean }, now = Date.now()): Work<void> {
  yield* exec(db.update(t.conversations).set({ ...patch, updatedAt: now }).where(eq(t.conversations.id, id)));
}

/**
 * The conversations a user owns or writes to, most recently active first, keyset-paginated on
 * (updatedAt, id). `kind`: only those with at least one AI turn of that kind (research runs).
 */
export function* listConversationsFor(
  { db, t }: Tx,
  userId: string,
  opts: { limit: number; before?: { updatedAt: number; id: string }; kind?: 'chat' | 'research'; groups?: boolean },
): Work<Conversation[]> {
  const c = t.conversations;
  const access = or(
    eq(c.ownerId, userId),
    sql`EXISTS (SELECT 1 FROM ${t.conversationWriters} WHERE ${t.conversationWriters.conversationId} = ${c.id} AND ${t.conversationWriters.userId} = ${userId})`,
  );
  const page = opts.before ? or(lt(c.updatedAt, opts.before.updatedAt), and(eq(c.updatedAt, opts.before.updatedAt), lt(c.id, opts.before.id))) : undefined;
  const kind = opts.kind ? sql`EXISTS (SELECT 1 FROM ${t.responses} WHERE ${t.responses.conversationId} = ${c.id} AND ${t.responses.kind} = ${opts.kind})` : undefined;
  const notGroup = opts.groups === false ? sql`NOT EXISTS (SELECT 1 FROM ${t.groupChats} WHERE ${t.groupChats.conversationId} = ${c.id})` : undefined;
  return yield* allRows(db.select().from(c).where(and(access, page, kind, notGroup)).orderBy(desc(c.updatedAt), desc(c.id)).limit(opts.limit));
}

/** The branches a user owns (their cap: PARLEY_BRANCHES_MAX_PER_USER). */
export function countBranchesOf(tx: Tx, userId: string): Work<number> {
  const { db, t } = tx;
  return countRows(tx, t.conversationBranches, inArray(t.conversationBranches.conversationId, db.select({ id: t.conversations.id }).from(t.conversations).where(eq(t.conversations.ownerId, userId))));
}

/**
 * A new conversation owned by `ownerId` holding copies of `source`'s items up to and including
 * `item`, going on with `assistantId` (run with `store.write`).
 */
export function* branchConversation(tx: Tx, source: Conversation, item: ConversationItem, ownerId: string, now = Date.now(), assistantId: string | null = null): Work<Conversation> {
  const { db, t } = tx;
  const branch = yield* createConversation(tx, { ownerId, title: source.title, studyMode: source.studyMode, assistantId }, now);
  const items = yield* allRows(
    db
      .select()
      .from(t.conversationItems)
      .where(and(eq(t.conversationItems.conversationId, source.id), lt(t.conversationItems.position, item.position + 1)))
      .orderBy(asc(t.conversationItems.position)),
  );
  // A branch is its owner's own conversation, even when made from a group chat's.
  for (const it of items) yield* exec(db.insert(t.conversationItems).values({ ...it, id: newId(), conversationId: branch.id, searchable: true }));
  const nextPosition = items.length ? items[items.length - 1]!.position + 1 : 0;
  yield* exec(db.update(t.conversations).set({ nextPosition }).where(eq(t.conversations.id, branch.id)));
  yield* exec(db.insert(t.conversationBranches).values({ id: newId(), conversationId: branch.id, parentConversationId: source.id, parentItemId: item.id, createdAt: now }));
  return { ...branch, nextPosition };
}

export function* findBranchOf({ db, t }: Tx, conversationId: string) {
  return yield* getRow(db.select().from(t.conversationBranches).where(eq(t.conversationBranches.conversationId, conversationId)));
}
