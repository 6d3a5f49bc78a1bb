import { t } from 'elysia';
import type { Session } from '../db/schema';
import { iso } from '../ids';

// The response shape of a session, shared by the operations and the CLI. Never the token.

export const SessionSchema = t.Object({
  sessionId: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  lastUsedAt: t.String({ format: 'date-time' }),
  expiresAt: t.String({ format: 'date-time' }),
  userAgent: t.Union([t.String(), t.Null()]),
  current: t.Boolean({ description: 'true for the session this request was made with' }),
});

export const sessionView = (s: Session, currentId?: string) => ({
  sessionId: s.id,
  createdAt: iso(s.createdAt),
  lastUsedAt: iso(s.lastUsedAt),
  expiresAt: iso(s.expiresAt),
  userAgent: s.userAgent,
  current: s.id === currentId,
});
