import { and, asc, eq, gt, gte, inArray, or, sql } from 'drizzle-orm';
import type { AnswerFeedback, ResponseRow } from '../db/schema';
import { allRows, type Tx, type Work } from '../db/work';

/*
 * The admin export (`parley feedback export`) reads each rating with what judging it needs: the
 * answer, the question, the user, the group, the turn that wrote it. That is one read-only join
 * over the chat and group tables, a page at a time, rather than a chat-store call per rating.
 */

export type ExportRow = Pick<AnswerFeedback, 'id' | 'userId' | 'itemId' | 'rating' | 'reasons' | 'comment' | 'createdAt' | 'updatedAt'> & {
  userEmail: string;
  conversationId: string;
  answer: string;
  groupChatId: string | null;
  /** The turn that wrote the answer (chat or research); null for a group's answer or a branch's copy. */
  responseId: string | null;
  /** The last user message before the answer. */
  previous: string | null;
  /** In a group: the last member message before the answer that addresses the assistant. */
  mentioning: string | null;
};

export interface ExportPage {
  since?: number;
  /** Keyset: the page starts after this rating. */
  after?: { updatedAt: number; id: string };
  limit: number;
  /** The assistant's handle in groups (PARLEY_AI_HANDLE), without the `@`. */
  handle: string;
}

/** `%` and `_` mean themselves in the handle (`_` is allowed in one). */
const likeText = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** One page of ratings, oldest change first (`updatedAt`, then id). */
export function* readExportPage({ db, t }: Tx, page: ExportPage): Work<ExportRow[]> {
  const f = t.answerFeedback;
  const a = t.conversationItems;
  const g = t.groupChats;
  // The inner tables are aliased, so the unaliased names below are the outer row's columns.
  // A turn's answer is stored in the transaction that finishes it, at the same millisecond as
  // `finished_at`; a row stored otherwise falls back to the conversation's last turn begun before it.
  const responseId = sql<string | null>`coalesce(
    (SELECT r.id FROM responses r WHERE r.conversation_id = ${a.conversationId} AND r.finished_at = ${a.createdAt} ORDER BY r.id LIMIT 1),
    (SELECT r.id FROM responses r WHERE r.conversation_id = ${a.conversationId} AND r.created_at <= ${a.createdAt} ORDER BY r.created_at DESC, r.id DESC LIMIT 1))`;
  const earlierUserItem = sql`FROM conversation_items q WHERE q.conversation_id = ${a.conversationId} AND q.role = 'user' AND q.position < ${a.position}`;
  const mention = `%@${likeText(page.handle.toLowerCase())}%`;
  return yield* allRows(
    db
      .select({
        id: f.id,
        userId: f.userId,
        itemId: f.itemId,
        rating: f.rating,
        reasons: f.reasons,
        comment: f.comment,
        createdAt: f.createdAt,
        updatedAt: f.updatedAt,
        userEmail: t.users.email,
        conversationId: a.conversationId,
        answer: a.content,
        groupChatId: g.id,
        responseId,
        previous: sql<string | null>`(SELECT q.content ${earlierUserItem} ORDER BY q.position DESC LIMIT 1)`,
        mentioning: sql<string | null>`CASE WHEN ${g.id} IS NULL THEN NULL ELSE
          (SELECT q.content ${earlierUserItem} AND lower(q.content) LIKE ${mention} ESCAPE '\\' ORDER BY q.position DESC LIMIT 1) END`,
      })
      .from(f)
      .innerJoin(a, eq(a.id, f.itemId))
      .innerJoin(t.users, eq(t.users.id, f.userId))
      .leftJoin(g, eq(g.conversationId, a.conversationId))
      .where(
        and(
          page.since === undefined ? undefined : gte(f.updatedAt, page.since),
          page.after ? or(gt(f.updatedAt, page.after.updatedAt), and(eq(f.updatedAt, page.after.updatedAt), gt(f.id, page.after.id))) : undefined,
        ),
      )
      .orderBy(asc(f.updatedAt), asc(f.id))
      .limit(page.limit),
  );
}

export type ExportResponse = Pick<ResponseRow, 'id' | 'kind' | 'model' | 'input'>;

/** The turns a page's rows name: their kind, model and what they were asked. */
export function* readExportResponses({ db, t }: Tx, ids: string[]): Work<Map<string, ExportResponse>> {
  if (!ids.length) return new Map();
  const r = t.responses;
  const rows = yield* allRows(db.select({ id: r.id, kind: r.kind, model: r.model, input: r.input }).from(r).where(inArray(r.id, ids)));
  return new Map(rows.map((row) => [row.id, row]));
}
