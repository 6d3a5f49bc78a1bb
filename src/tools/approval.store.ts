import { and, desc, eq } from 'drizzle-orm';
import type { ConversationToolRule, ToolApprovalRow } from '../db/schema';
import { allRows, exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts) for tool approval (docs/chat.md, "Tool approval").

export interface NewApproval {
  responseId: string;
  itemId: string;
  callKey: string;
  toolName: string;
  source: string;
  arguments: Record<string, unknown>;
  expiresAt: number;
}

/** The approval of one call of one response (by its call key), if asked already. */
export function* findApprovalOfCall({ db, t }: Tx, responseId: string, callKey: string): Work<ToolApprovalRow | undefined> {
  return yield* getRow(db.select().from(t.toolApprovals).where(and(eq(t.toolApprovals.responseId, responseId), eq(t.toolApprovals.callKey, callKey))));
}

export function* findApprovalById({ db, t }: Tx, id: string): Work<ToolApprovalRow | undefined> {
  return yield* getRow(db.select().from(t.toolApprovals).where(eq(t.toolApprovals.id, id)));
}

/** The newest approval of a response with this item id (a server may repeat call ids from round to round). */
export function* findApprovalOfItem({ db, t }: Tx, responseId: string, itemId: string): Work<ToolApprovalRow | undefined> {
  return yield* getRow(
    db
      .select()
      .from(t.toolApprovals)
      .where(and(eq(t.toolApprovals.responseId, responseId), eq(t.toolApprovals.itemId, itemId)))
      .orderBy(desc(t.toolApprovals.createdAt), desc(t.toolApprovals.id))
      .limit(1),
  );
}

export function* insertApproval({ db, t }: Tx, input: NewApproval, now: number): Work<ToolApprovalRow> {
  const row = yield* getRow(
    db
      .insert(t.toolApprovals)
      .values({ id: newId(), ...input, status: 'pending', decidedBy: null, announced: false, createdAt: now, decidedAt: null })
      .returning(),
  );
  return row!;
}

/** Decide a pending approval; undefined when it was not pending any more (decided meanwhile). */
export function* decideApproval(
  { db, t }: Tx,
  id: string,
  status: 'approved' | 'denied',
  decidedBy: NonNullable<ToolApprovalRow['decidedBy']>,
  now: number,
): Work<ToolApprovalRow | undefined> {
  return yield* getRow(
    db
      .update(t.toolApprovals)
      .set({ status, decidedBy, decidedAt: now })
      .where(and(eq(t.toolApprovals.id, id), eq(t.toolApprovals.status, 'pending')))
      .returning(),
  );
}

export function* markAnnounced({ db, t }: Tx, id: string): Work<void> {
  yield* exec(db.update(t.toolApprovals).set({ announced: true }).where(eq(t.toolApprovals.id, id)));
}

/** A response ended (completed, failed, cancelled): what still waits is denied, nothing will run it. */
export function* endPendingApprovals({ db, t }: Tx, responseId: string, now: number): Work<number> {
  const rows = yield* allRows(
    db
      .update(t.toolApprovals)
      .set({ status: 'denied', decidedBy: 'ended', decidedAt: now })
      .where(and(eq(t.toolApprovals.responseId, responseId), eq(t.toolApprovals.status, 'pending')))
      .returning({ id: t.toolApprovals.id }),
  );
  return rows.length;
}

export function* findToolRule({ db, t }: Tx, conversationId: string, userId: string, toolName: string): Work<ConversationToolRule | undefined> {
  return yield* getRow(
    db
      .select()
      .from(t.conversationToolRules)
      .where(and(eq(t.conversationToolRules.conversationId, conversationId), eq(t.conversationToolRules.userId, userId), eq(t.conversationToolRules.toolName, toolName))),
  );
}

/** "Always for this conversation": the user's standing answer for one tool, replacing an earlier one. */
export function* setToolRule({ db, t }: Tx, rule: Omit<ConversationToolRule, 'createdAt'>, now: number): Work<void> {
  yield* exec(
    db
      .insert(t.conversationToolRules)
      .values({ ...rule, createdAt: now })
      .onConflictDoUpdate({
        target: [t.conversationToolRules.conversationId, t.conversationToolRules.userId, t.conversationToolRules.toolName],
        set: { decision: rule.decision, createdAt: now },
      }),
  );
}

export function* listToolRules({ db, t }: Tx, conversationId: string, userId: string): Work<ConversationToolRule[]> {
  return yield* allRows(
    db
      .select()
      .from(t.conversationToolRules)
      .where(and(eq(t.conversationToolRules.conversationId, conversationId), eq(t.conversationToolRules.userId, userId)))
      .orderBy(t.conversationToolRules.toolName),
  );
}

export function* deleteToolRule({ db, t }: Tx, conversationId: string, userId: string, toolName: string): Work<boolean> {
  const rows = yield* allRows(
    db
      .delete(t.conversationToolRules)
      .where(and(eq(t.conversationToolRules.conversationId, conversationId), eq(t.conversationToolRules.userId, userId), eq(t.conversationToolRules.toolName, toolName)))
      .returning({ t: t.conversationToolRules.toolName }),
  );
  return rows.length > 0;
}
