import { t } from 'elysia';
import type { Conversation, ConversationBranch, ConversationItem } from '../db/schema';
import { iso } from '../ids';

export const ConversationSchema = t.Object({
  id: t.String(),
  title: t.String(),
  ownerId: t.String(),
  studyMode: t.Boolean(),
  branchOf: t.Union([t.Object({ conversationId: t.String(), itemId: t.String() }), t.Null()]),
  createdAt: t.String(),
  updatedAt: t.String(),
  lastResponse: t.Optional(
    t.Union([t.Object({ id: t.String(), kind: t.Union([t.Literal('chat'), t.Literal('research')]), status: t.String() }), t.Null()], {
      description:
        'The conversation\'s latest AI turn (chat/listConversations and chat/getConversation only): its response id (for chat/resumeStream), `chat` or `research`, and its status (`queued`, `in_progress`, `completed`, `failed`, `cancelled`); null when none.',
    }),
  ),
  assistantId: t.Union([t.String(), t.Null()], { description: 'The assistant the conversation goes on with (docs/assistants.md); null: Parley itself.' }),
  groupChatId: t.Optional(
    t.Union([t.String(), t.Null()], {
      description: 'The group chat whose conversation this is (chat/listConversations and chat/getConversation only); null for a one-to-one conversation.',
    }),
  ),
});

/** A conversation's latest AI turn, as `lastResponse` shows it. */
export type LastResponse = { id: string; kind: 'chat' | 'research'; status: string };

export const ItemSchema = t.Object({
  id: t.String(),
  role: t.String(),
  content: t.String(),
  parts: t.Array(t.Unknown()),
  createdAt: t.String(),
});

/** `lastResponse` and `groupChatId` are given by the operations that list or read conversations. */
export const conversationView = (c: Conversation, branch?: ConversationBranch, extra: { lastResponse?: LastResponse | null; groupChatId?: string | null } = {}) => ({
  id: c.id,
  title: c.title,
  ownerId: c.ownerId,
  studyMode: c.studyMode,
  assistantId: c.assistantId ?? null,
  branchOf: branch ? { conversationId: branch.parentConversationId, itemId: branch.parentItemId } : null,
  createdAt: iso(c.createdAt),
  updatedAt: iso(c.updatedAt),
  ...extra,
});

export const itemView = (i: ConversationItem) => ({ id: i.id, role: i.role, content: i.content, parts: i.parts, createdAt: iso(i.createdAt) });

/** Opaque keyset cursor: the last row's (updatedAt, id). */
export const encodeCursor = (c: Conversation) => Buffer.from(`${c.updatedAt}:${c.id}`).toString('base64url');

/** The (updatedAt, id) of a cursor `encodeCursor` made; undefined for anything else. */
export function decodeCursor(cursor: string): { updatedAt: number; id: string } | undefined {
  const m = /^(\d{1,16}):(.+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!m || Buffer.from(`${m[1]}:${m[2]}`).toString('base64url') !== cursor) return undefined;
  return { updatedAt: Number(m[1]), id: m[2]! };
}
