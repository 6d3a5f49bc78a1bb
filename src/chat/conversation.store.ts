import { and, asc, desc, eq, gte, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { conversationBranches, conversationItems, conversations, conversationWriters, groupChats, responses, type Conversation, type ConversationItem } from '../db/schema';
import { newId } from '../ids';
import { preparedFor } from '../db/prepared';

export function createConversation(
  db: Db,
  input: { ownerId: string; title?: string; studyMode?: boolean },
  now = Date.now(),
): Conversation {
  // Every first chat turn waits for this before its request goes upstream: a prepared statement,
  // not drizzle's per-call SQL and RETURNING (bench/RESULTS.md, the real-model figure).
  const row: Conversation = { id: newId(), ownerId: input.ownerId, title: input.title ?? '', studyMode: input.studyMode ?? false, createdAt: now, updatedAt: now, nextPosition: 0 };
  hot(db).insertConversation.run(row.id, row.ownerId, row.title, row.studyMode ? 1 : 0, now);
  return row;
}

// On the hot path of every conversation operation and every message: prepared once
// (src/db/prepared.ts).
const hot = preparedFor((db) => ({
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
  takePosition: db.$client.prepare<never, [string, number]>(
    'UPDATE conversations SET updated_at = ?2, next_position = next_position + 1 WHERE id = ?1',
  ),
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
}));

export const findConversationById = (db: Db, id: string): Conversation | undefined => hot(db).byId.get({ id });

/** Owner or writer. One indexed lookup: this sits on the hot path of every write. */
export function canWriteConversation(db: Db, conversationId: string, userId: string): boolean {
  return hot(db).writable.get(conversationId, userId) !== null;
}

export function addWriter(db: Db, conversationId: string, userId: string, now = Date.now()): void {
  db.insert(conversationWriters).values({ conversationId, userId, createdAt: now }).onConflictDoNothing().run();
}

export function removeWriter(db: Db, conversationId: string, userId: string): void {
  db.delete(conversationWriters)
    .where(and(eq(conversationWriters.conversationId, conversationId), eq(conversationWriters.userId, userId)))
    .run();
}

/**
 * Append an item at the end of a conversation. Call it inside the write transaction when several
 * writers race (both statements then see the same table, so nobody takes the position in between),
 * and pass the root connection even there: the statements are prepared on it, and a transaction
 * runs on that same connection.
 */
export function appendItem(
  db: Db,
  input: { conversationId: string; role: ConversationItem['role']; content: string; parts?: unknown[]; authorId?: string | null },
  now = Date.now(),
): Omit<ConversationItem, 'searchable'> {
  const stmts = hot(db);
  const id = newId();
  const parts = input.parts ?? [];
  const authorId = input.authorId ?? null;
  // No conversation: no position, and the insert fails on its foreign key as it always did.
  const position = stmts.takePosition.run(input.conversationId, now).changes ? stmts.takenPosition.get(input.conversationId)!.position : 0;
  stmts.insertItem.run(id, input.conversationId, position, input.role, input.content, JSON.stringify(parts), authorId, now);
  return { id, conversationId: input.conversationId, position, role: input.role, content: input.content, parts, authorId, createdAt: now };
}

/** A conversation's items in order: every AI turn reads them before its request goes upstream (prepared). */
export const listItems = (db: Db, conversationId: string): ConversationItem[] => hot(db).items.all({ id: conversationId });

export const findItemById = (db: Db, id: string): ConversationItem | undefined =>
  db.select().from(conversationItems).where(eq(conversationItems.id, id)).get();

/** Delete `item` and every later item of its conversation; returns how many went. */
export function truncateFromItem(db: Db, item: ConversationItem, now = Date.now()): number {
  const changes = db
    .delete(conversationItems)
    .where(and(eq(conversationItems.conversationId, item.conversationId), gte(conversationItems.position, item.position)))
    .returning({ id: conversationItems.id })
    .all().length;
  // Everything from `item` on is gone: the next item takes its place.
  db.update(conversations).set({ updatedAt: now, nextPosition: item.position }).where(eq(conversations.id, item.conversationId)).run();
  return changes;
}

/** Removes the conversation; items, writers, branches, responses, events, widgets and bookmarks follow by cascade. */
export const deleteConversation = (db: Db, id: string): boolean => db.delete(conversations).where(eq(conversations.id, id)).returning({ id: conversations.id }).all().length > 0;

export function updateConversation(db: Db, id: string, patch: { title?: string; studyMode?: boolean }, now = Date.now()): void {
  db.update(conversations).set({ ...patch, updatedAt: now }).where(eq(conversations.id, id)).run();
}

/**
 * The conversations a user owns or writes to, most recently active first, keyset-paginated on
 * (updatedAt, id). `kind`: only those with at least one AI turn of that kind (research runs).
 */
export function listConversationsFor(
  db: Db,
  userId: string,
  opts: { limit: number; before?: { updatedAt: number; id: string }; kind?: 'chat' | 'research'; groups?: boolean },
): Conversation[] {
  const access = or(
    eq(conversations.ownerId, userId),
    sql`EXISTS (SELECT 1 FROM ${conversationWriters} WHERE ${conversationWriters.conversationId} = ${conversations.id} AND ${conversationWriters.userId} = ${userId})`,
  );
  const page = opts.before
    ? or(lt(conversations.updatedAt, opts.before.updatedAt), and(eq(conversations.updatedAt, opts.before.updatedAt), lt(conversations.id, opts.before.id)))
    : undefined;
  const kind = opts.kind
    ? sql`EXISTS (SELECT 1 FROM ${responses} WHERE ${responses.conversationId} = ${conversations.id} AND ${responses.kind} = ${opts.kind})`
    : undefined;
  const notGroup = opts.groups === false ? sql`NOT EXISTS (SELECT 1 FROM ${groupChats} WHERE ${groupChats.conversationId} = ${conversations.id})` : undefined;
  return db
    .select()
    .from(conversations)
    .where(and(access, page, kind, notGroup))
    .orderBy(desc(conversations.updatedAt), desc(conversations.id))
    .limit(opts.limit)
    .all();
}

/** A new conversation owned by `ownerId` holding copies of `source`'s items up to and including `item`. */
export function branchConversation(db: Db, source: Conversation, item: ConversationItem, ownerId: string, now = Date.now()): Conversation {
  const branch = createConversation(db, { ownerId, title: source.title, studyMode: source.studyMode }, now);
  const items = db
    .select()
    .from(conversationItems)
    .where(and(eq(conversationItems.conversationId, source.id), lt(conversationItems.position, item.position + 1)))
    .orderBy(asc(conversationItems.position))
    .all();
  for (const it of items)
    db.insert(conversationItems)
      // A branch is its owner's own conversation, even when made from a group chat's.
      .values({ ...it, id: newId(), conversationId: branch.id, searchable: true })
      .run();
  const nextPosition = items.length ? items[items.length - 1]!.position + 1 : 0;
  db.update(conversations).set({ nextPosition }).where(eq(conversations.id, branch.id)).run();
  db.insert(conversationBranches).values({ id: newId(), conversationId: branch.id, parentConversationId: source.id, parentItemId: item.id, createdAt: now }).run();
  return { ...branch, nextPosition };
}

export const findBranchOf = (db: Db, conversationId: string) =>
  db.select().from(conversationBranches).where(eq(conversationBranches.conversationId, conversationId)).get();
