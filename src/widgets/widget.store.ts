import { eq } from 'drizzle-orm';
import type { Widget } from '../db/schema';
import { exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/**
 * Store a widget. With an `origin` (the tool call that makes it) this is idempotent: a second
 * call with the same origin returns the widget the first one stored, unchanged.
 */
export function* createWidget(
  { db, t }: Tx,
  input: { conversationId: string; responseId: string; widgetType: string; title?: string; document?: Record<string, unknown>; origin?: string },
  now: number,
): Work<Widget> {
  const made = yield* getRow(
    db
      .insert(t.widgets)
      .values({
        id: newId(),
        conversationId: input.conversationId,
        responseId: input.responseId,
        widgetType: input.widgetType,
        title: input.title ?? '',
        document: input.document ?? {},
        origin: input.origin ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: t.widgets.origin })
      .returning(),
  );
  return made ?? (yield* getRow(db.select().from(t.widgets).where(eq(t.widgets.origin, input.origin!))))!;
}

export function* findWidgetById({ db, t }: Tx, id: string): Work<Widget | undefined> {
  return yield* getRow(db.select().from(t.widgets).where(eq(t.widgets.id, id)));
}

export function* updateWidgetDocument({ db, t }: Tx, id: string, document: Record<string, unknown>, now: number): Work<void> {
  yield* exec(db.update(t.widgets).set({ document, updatedAt: now }).where(eq(t.widgets.id, id)));
}
