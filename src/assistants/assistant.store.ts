import { and, asc, count, eq, isNull, or } from 'drizzle-orm';
import type { Assistant } from '../db/schema';
import { allRows, exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts) for assistants (docs/assistants.md).

export type AssistantFields = Pick<
  Assistant,
  'visibility' | 'tiers' | 'name' | 'description' | 'instructions' | 'model' | 'tools' | 'starters' | 'knowledgeFileIds' | 'mcpServerIds' | 'parameters'
>;

/** Who is asking: an assistant is theirs, shared with everyone, or shared with their tier. */
export interface Viewer {
  id: string;
  subscriptionTier: string;
  isAdmin: boolean;
}

/** Whether `viewer` may see and use `a`: their own, or a shared one for them (admins see every shared one). */
export const canUseAssistant = (a: Assistant, viewer: Viewer): boolean =>
  a.ownerId === viewer.id || (a.ownerId === null && (viewer.isAdmin || a.visibility === 'everyone' || (a.visibility === 'tiers' && a.tiers.includes(viewer.subscriptionTier))));

/** Whether `viewer` may change or delete `a`: their own; a shared one, admins. */
export const canEditAssistant = (a: Assistant, viewer: Viewer): boolean => a.ownerId === viewer.id || (a.ownerId === null && viewer.isAdmin);

export function* findAssistantById({ db, t }: Tx, id: string): Work<Assistant | undefined> {
  return yield* getRow(db.select().from(t.assistants).where(eq(t.assistants.id, id)));
}

/** The caller's own and every shared one, by name; the visibility of shared ones is checked by the caller (canUseAssistant). */
export function* listAssistantsFor({ db, t }: Tx, userId: string): Work<Assistant[]> {
  return yield* allRows(
    db
      .select()
      .from(t.assistants)
      .where(or(eq(t.assistants.ownerId, userId), isNull(t.assistants.ownerId)))
      .orderBy(asc(t.assistants.name), asc(t.assistants.id)),
  );
}

export function* countOwnAssistants({ db, t }: Tx, userId: string): Work<number> {
  const row = yield* getRow(db.select({ n: count() }).from(t.assistants).where(eq(t.assistants.ownerId, userId)));
  return Number(row?.n ?? 0);
}

export function* insertAssistant({ db, t }: Tx, ownerId: string | null, fields: AssistantFields, now: number): Work<Assistant> {
  const row = yield* getRow(
    db
      .insert(t.assistants)
      .values({ id: newId(), ownerId, ...fields, createdAt: now, updatedAt: now })
      .returning(),
  );
  return row!;
}

export function* updateAssistant({ db, t }: Tx, id: string, change: Partial<AssistantFields>, now: number): Work<Assistant> {
  const row = yield* getRow(
    db
      .update(t.assistants)
      .set({ ...change, updatedAt: now })
      .where(eq(t.assistants.id, id))
      .returning(),
  );
  return row!;
}

/** The conversations started with it go on with Parley itself. */
export function* deleteAssistant({ db, t }: Tx, id: string): Work<void> {
  yield* exec(db.update(t.conversations).set({ assistantId: null }).where(eq(t.conversations.assistantId, id)));
  yield* exec(db.delete(t.assistants).where(and(eq(t.assistants.id, id))));
}

/** The assistant a conversation was started with, if it still exists. */
export function* assistantOfConversation({ db, t }: Tx, conversationId: string): Work<Assistant | undefined> {
  const row = yield* getRow(
    db
      .select({ a: t.assistants })
      .from(t.conversations)
      .innerJoin(t.assistants, eq(t.assistants.id, t.conversations.assistantId))
      .where(eq(t.conversations.id, conversationId)),
  );
  return row?.a;
}

/** The assistant a branch of `source` goes on with: the source's, if whoever branches may use it; else Parley itself (null). */
export function* assistantForBranch(tx: Tx, source: { assistantId: string | null }, viewer: Viewer): Work<string | null> {
  if (!source.assistantId) return null;
  const a = yield* findAssistantById(tx, source.assistantId);
  return a && canUseAssistant(a, viewer) ? a.id : null;
}
