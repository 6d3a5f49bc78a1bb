import { eq } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { widgets, type Widget } from '../db/schema';
import { newId } from '../ids';

/**
 * Store a widget. With an `origin` (the tool call that makes it) this is idempotent: a second
 * call with the same origin returns the widget the first one stored, unchanged.
 */
export function createWidget(
  db: Db,
  input: { conversationId: string; responseId: string; widgetType: string; title?: string; document?: Record<string, unknown>; origin?: string },
  now = Date.now(),
): Widget {
  const made = db
    .insert(widgets)
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
    .onConflictDoNothing({ target: widgets.origin })
    .returning()
    .get();
  return made ?? db.select().from(widgets).where(eq(widgets.origin, input.origin!)).get()!;
}

export const findWidgetById = (db: Db, id: string): Widget | undefined => db.select().from(widgets).where(eq(widgets.id, id)).get();

export function updateWidgetDocument(db: Db, id: string, document: Record<string, unknown>, now = Date.now()): void {
  db.update(widgets).set({ document, updatedAt: now }).where(eq(widgets.id, id)).run();
}
