import { eq } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { widgets, type Widget } from '../db/schema';
import { newId } from '../ids';

export function createWidget(
  db: Db,
  input: { conversationId: string; responseId: string; widgetType: string; title?: string; document?: Record<string, unknown> },
  now = Date.now(),
): Widget {
  return db
    .insert(widgets)
    .values({
      id: newId(),
      conversationId: input.conversationId,
      responseId: input.responseId,
      widgetType: input.widgetType,
      title: input.title ?? '',
      document: input.document ?? {},
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
}

export const findWidgetById = (db: Db, id: string): Widget | undefined => db.select().from(widgets).where(eq(widgets.id, id)).get();

export function updateWidgetDocument(db: Db, id: string, document: Record<string, unknown>, now = Date.now()): void {
  db.update(widgets).set({ document, updatedAt: now }).where(eq(widgets.id, id)).run();
}
