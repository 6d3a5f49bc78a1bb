import { t } from 'elysia';
import type { SupportMessage, SupportThread } from '../db/schema';
import { iso, isoOrNull } from '../ids';
import type { PagePosition, SupportThreadWithUser } from './support.store';

// What the API and the CLI show of support threads. The user never sees an admin's e-mail; the
// admins' views (the CLI's --json) carry it, and the user's e-mail.

const Timestamp = t.String({ format: 'date-time' });
const OptTimestamp = t.Union([Timestamp, t.Null()]);

export const SupportThreadSchema = t.Object({
  id: t.String(),
  subject: t.String(),
  status: t.Union([t.Literal('open'), t.Literal('closed')]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  lastMessageAt: Timestamp,
  closedAt: OptTimestamp,
  unreadCount: t.Integer({ description: "Admins' messages the user has not read (support/getThread reads them)." }),
});

export const SupportMessageSchema = t.Object({
  id: t.String(),
  threadId: t.String(),
  author: t.Union([t.Literal('user'), t.Literal('admin')]),
  adminName: t.Union([t.String(), t.Null()], { description: "The answering admin's name, when they gave one; null on the user's messages." }),
  body: t.String(),
  createdAt: Timestamp,
  readByUserAt: OptTimestamp,
  readByAdminAt: OptTimestamp,
});

export function supportThreadView(th: SupportThread, unreadCount: number) {
  return {
    id: th.id,
    subject: th.subject,
    status: th.status,
    createdAt: iso(th.createdAt),
    updatedAt: iso(th.updatedAt),
    lastMessageAt: iso(th.lastMessageAt),
    closedAt: isoOrNull(th.closedAt),
    unreadCount,
  };
}

export function supportMessageView(m: SupportMessage) {
  return {
    id: m.id,
    threadId: m.threadId,
    author: m.author,
    adminName: m.adminName,
    body: m.body,
    createdAt: iso(m.createdAt),
    readByUserAt: isoOrNull(m.readByUserAt),
    readByAdminAt: isoOrNull(m.readByAdminAt),
  };
}

/** The admins' view of a thread: whose it is, and what the admins have not read. */
export function adminThreadView(th: SupportThreadWithUser, unreadCount: number) {
  return { ...supportThreadView(th, unreadCount), userId: th.userId, userEmail: th.userEmail };
}

export const adminMessageView = (m: SupportMessage) => ({ ...supportMessageView(m), adminEmail: m.adminEmail });

/** A page position as an opaque cursor (time and id, base64url). */
export const encodeSupportCursor = (p: PagePosition): string => Buffer.from(`${p.at}:${p.id}`).toString('base64url');

/** The position of a cursor `encodeSupportCursor` made; undefined for anything else. */
export function decodeSupportCursor(cursor: string): PagePosition | undefined {
  const m = /^(\d{1,16}):(.+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!m || encodeSupportCursor({ at: Number(m[1]), id: m[2]! }) !== cursor) return undefined;
  return { at: Number(m[1]), id: m[2]! };
}
