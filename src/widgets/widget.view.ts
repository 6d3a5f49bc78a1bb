import { t } from 'elysia';
import type { Widget, WidgetThread, WidgetThreadMessage } from '../db/schema';
import { iso } from '../ids';

const Timestamp = t.String({ format: 'date-time' });

export const WidgetSchema = t.Object({
  id: t.String(),
  conversationId: t.String(),
  responseId: t.String(),
  widgetType: t.String(),
  title: t.String(),
  document: t.Record(t.String(), t.Unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const ThreadMessageSchema = t.Object({
  id: t.String(),
  threadId: t.String(),
  data: t.Record(t.String(), t.Unknown()),
  createdAt: Timestamp,
});

export const ThreadSchema = t.Object({
  id: t.String(),
  widgetId: t.String(),
  userId: t.String(),
  status: t.String({ description: '`active` (the one in use) or `archived` (retired by widget/archiveThread)' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  messages: t.Array(ThreadMessageSchema),
});

export const widgetView = (w: Widget) => ({
  id: w.id,
  conversationId: w.conversationId,
  responseId: w.responseId,
  widgetType: w.widgetType,
  title: w.title,
  document: w.document,
  createdAt: iso(w.createdAt),
  updatedAt: iso(w.updatedAt),
});

export const threadMessageView = (m: WidgetThreadMessage) => ({ id: m.id, threadId: m.threadId, data: m.data, createdAt: iso(m.createdAt) });

export const threadView = (th: WidgetThread, messages: WidgetThreadMessage[]) => ({
  id: th.id,
  widgetId: th.widgetId,
  userId: th.userId,
  status: th.status,
  createdAt: iso(th.createdAt),
  updatedAt: iso(th.updatedAt),
  messages: messages.map(threadMessageView),
});
