import { and, eq, isNotNull, sql } from 'drizzle-orm';
import { exec, getRow, serializeOn, type Tx, type Work } from '../db/work';
import type { Conversation } from '../db/schema';
import { capReached } from '../http/user-caps';
import { appendItem, createConversation } from './conversation.store';

export interface ImportedMessage {
  role: 'user' | 'assistant';
  content: string;
  /** When it was written (ms); missing or out of order: the one before it. */
  at?: number;
}

/** What one user's imported conversations may hold (PARLEY_IMPORTS_MAX_PER_USER, PARLEY_IMPORT_QUOTA_BYTES). */
export interface ImportCaps {
  maxConversations: number;
  quotaBytes: number;
}

/**
 * What a message costs besides its content: an empty one still takes about 220 bytes of SQLite
 * (its row, its indexes, its full-text entry), so 2,000 empty messages a request must count too.
 */
export const MESSAGE_ROW_BYTES = 256;

/** The bytes an import counts against the quota: the title, and each message's content (UTF-8) and row. */
export const importedBytesOf = (input: { title: string; messages: ImportedMessage[] }) =>
  input.messages.reduce((sum, m) => sum + Buffer.byteLength(m.content) + MESSAGE_ROW_BYTES, Buffer.byteLength(input.title));

/** The imported conversations a user keeps and the bytes they count, from the owner index. */
export function* importsHeldBy({ db, t }: Tx, ownerId: string): Work<{ count: number; bytes: number }> {
  const c = t.conversations;
  return (yield* getRow(
    db
      .select({ count: sql<number>`count(*)`.mapWith(Number), bytes: sql<number>`coalesce(sum(${c.importedBytes}), 0)`.mapWith(Number) })
      .from(c)
      .where(and(eq(c.ownerId, ownerId), isNotNull(c.importedBytes))),
  ))!;
}

/**
 * Refuse an import of `bytes` past the owner's caps (409 naming the one reached). The owner's
 * imports queue behind each other first (on PostgreSQL; SQLite's one writer does that already),
 * so imports at once cannot pass a cap together.
 */
function* checkImportRoom(tx: Tx, ownerId: string, bytes: number, caps: ImportCaps): Work<void> {
  yield* serializeOn(tx, `cap:imports:${ownerId}`);
  const held = yield* importsHeldBy(tx, ownerId);
  const deleteSome = 'Delete imported conversations you no longer need first (chat/deleteConversation).';
  if (held.count >= caps.maxConversations) throw capReached('importsMaxPerUser', caps.maxConversations, `You keep ${held.count} imported conversations`, deleteSome);
  if (held.bytes + bytes > caps.quotaBytes)
    throw capReached('importQuotaBytes', caps.quotaBytes, `Your imported conversations hold ${held.bytes} bytes and this one has ${bytes}`, deleteSome);
}

/**
 * A conversation brought in from elsewhere (a ChatGPT export, or Parley's own JSON export), in
 * one transaction: within the owner's caps, a conversation owned by the caller marked with the
 * bytes it counts, then its messages in order, each with its original time where it has one
 * (never in the future, never before the one before it), so the list orders an imported
 * conversation by when it was last active.
 */
export function* importConversation(tx: Tx, input: { ownerId: string; title: string; messages: ImportedMessage[] }, now: number, caps: ImportCaps): Work<Conversation> {
  const importedBytes = importedBytesOf(input);
  yield* checkImportRoom(tx, input.ownerId, importedBytes, caps);
  const times = input.messages.map((m) => Math.min(now, m.at ?? Number.NaN));
  let last = Number.isFinite(times[0]) ? times[0]! : now;
  const conversation = yield* createConversation(tx, { ownerId: input.ownerId, title: input.title }, last);
  yield* exec(tx.db.update(tx.t.conversations).set({ importedBytes }).where(eq(tx.t.conversations.id, conversation.id)));
  for (const [i, m] of input.messages.entries()) {
    const at = Number.isFinite(times[i]) && times[i]! >= last ? times[i]! : last;
    last = at;
    yield* appendItem(tx, { conversationId: conversation.id, role: m.role, content: m.content, authorId: m.role === 'user' ? input.ownerId : null }, at);
  }
  return { ...conversation, importedBytes, updatedAt: last };
}
