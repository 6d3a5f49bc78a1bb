import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { conversationItems, conversations, conversationWriters, type Conversation, type ConversationItem } from '../db/schema';
import { newId } from '../ids';
import { preparedFor } from '../db/prepared';

export function createConversation(
  db: Db,
  input: { ownerId: string; title?: string; studyMode?: boolean },
  now = Date.now(),
): Conversation {
  return db
    .insert(conversations)
    .values({ id: newId(), ownerId: input.ownerId, title: input.title ?? '', studyMode: input.studyMode ?? false, createdAt: now, updatedAt: now })
    .returning()
    .get();
}

// Both sit on the hot path of every conversation operation: prepared once (src/db/prepared.ts).
const hot = preparedFor((db) => ({
  byId: db.select().from(conversations).where(eq(conversations.id, sql.placeholder('id'))).prepare(),
  writable: db
    .select({ ok: sql<number>`1` })
    .from(conversations)
    .where(
      and(
        eq(conversations.id, sql.placeholder('conversationId')),
        sql`(${conversations.ownerId} = ${sql.placeholder('userId')} OR EXISTS (SELECT 1 FROM ${conversationWriters} WHERE ${conversationWriters.conversationId} = ${conversations.id} AND ${conversationWriters.userId} = ${sql.placeholder('userId')}))`,
      ),
    )
    .prepare(),
}));

export const findConversationById = (db: Db, id: string): Conversation | undefined => hot(db).byId.get({ id });

/** Owner or writer. One indexed lookup: this sits on the hot path of every write. */
export function canWriteConversation(db: Db, conversationId: string, userId: string): boolean {
  return hot(db).writable.get({ conversationId, userId }) !== undefined;
}

export function addWriter(db: Db, conversationId: string, userId: string, now = Date.now()): void {
  db.insert(conversationWriters).values({ conversationId, userId, createdAt: now }).onConflictDoNothing().run();
}

export function removeWriter(db: Db, conversationId: string, userId: string): void {
  db.delete(conversationWriters)
    .where(and(eq(conversationWriters.conversationId, conversationId), eq(conversationWriters.userId, userId)))
    .run();
}

/** Append an item at the end of a conversation. Call inside a write transaction when several writers race. */
export function appendItem(
  db: Db,
  input: { conversationId: string; role: ConversationItem['role']; content: string; parts?: unknown[]; authorId?: string | null },
  now = Date.now(),
): ConversationItem {
  const { next } = db
    .select({ next: sql<number>`coalesce(max(${conversationItems.position}), -1) + 1` })
    .from(conversationItems)
    .where(eq(conversationItems.conversationId, input.conversationId))
    .get()!;
  const item = db
    .insert(conversationItems)
    .values({
      id: newId(),
      conversationId: input.conversationId,
      position: next,
      role: input.role,
      content: input.content,
      parts: input.parts ?? [],
      authorId: input.authorId ?? null,
      createdAt: now,
    })
    .returning()
    .get();
  db.update(conversations).set({ updatedAt: now }).where(eq(conversations.id, input.conversationId)).run();
  return item;
}

export const listItems = (db: Db, conversationId: string): ConversationItem[] =>
  db.select().from(conversationItems).where(eq(conversationItems.conversationId, conversationId)).orderBy(asc(conversationItems.position)).all();
