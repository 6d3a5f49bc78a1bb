import { t, type Static } from 'elysia';
import type { GroupChat } from '../db/schema';
import { iso } from '../ids';

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()]);

export const GroupChatSchema = t.Object({
  id: t.String(),
  name: t.String(),
  creatorId: t.String(),
  conversationId: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
  intelligentResponses: t.Boolean(),
  /** The catalogue id that answers `@ai` here; null: the server's group default (docs/groups.md). */
  model: t.Union([t.String(), t.Null()]),
  /** The shared assistant that answers `@ai` here; null: Parley's own (docs/groups.md). */
  assistantId: t.Union([t.String(), t.Null()]),
});

/** A web search the assistant ran while answering; in realtime progress events any field may be null. */
export const WebSearchPartSchema = t.Object({
  type: t.Literal('web_search_tool_call'),
  content: t.Object({
    query: Nullable(t.String()),
    num_results: Nullable(t.Number()),
    country: Nullable(t.String()),
    safe_search: Nullable(t.Boolean()),
  }),
});

export const SenderSchema = t.Object({ id: t.String(), name: t.String(), image: t.String() });

export const GroupMessageSchema = t.Object({
  id: t.String(),
  type: t.Literal('message'),
  role: t.Union([t.Literal('user'), t.Literal('assistant')]),
  content: t.String(),
  parts: t.Array(WebSearchPartSchema),
  sender: SenderSchema,
  /** An answer written by a shared assistant (its name is the sender's): which one. Absent on members' messages and on Parley's own answers. */
  assistantId: t.Optional(t.String()),
  createdAt: t.String({ format: 'date-time' }),
});

export const MemberSchema = t.Object({
  id: t.String(),
  name: t.String(),
  image: t.String(),
  joinedAt: t.String({ format: 'date-time' }),
  isCreator: t.Boolean(),
});

export type GroupChatView = Static<typeof GroupChatSchema>;
export type GroupMessage = Static<typeof GroupMessageSchema>;
export type WebSearchPart = Static<typeof WebSearchPartSchema>;
export type Sender = Static<typeof SenderSchema>;
export type MemberView = Static<typeof MemberSchema>;

export const groupChatOf = (g: GroupChat): GroupChatView => ({
  id: g.id,
  name: g.name,
  creatorId: g.creatorId,
  conversationId: g.conversationId,
  createdAt: iso(g.createdAt),
  updatedAt: iso(g.updatedAt),
  intelligentResponses: g.intelligentResponses,
  model: g.model ?? null,
  assistantId: g.assistantId ?? null,
});

/** The assistant has no user row; it appears under this fixed sender, named by the handle or by the shared assistant that answered. */
export const assistantSender = (name: string): Sender => ({ id: 'assistant', name, image: '' });

/** Who wrote an answer: a shared assistant (as it was named then), or Parley's own. */
export type AnswerAuthor = { assistantId: string; name: string };

/** A member whose account was deleted keeps their messages under an anonymous sender. */
export const formerMember: Sender = { id: '', name: '', image: '' };

export function groupMessageOf(
  item: { id: string; role: string; content: string; parts: unknown[]; createdAt: number },
  sender: Sender,
  author?: AnswerAuthor,
): GroupMessage {
  return {
    id: item.id,
    type: 'message',
    role: item.role === 'assistant' ? 'assistant' : 'user',
    content: item.content,
    parts: item.parts as WebSearchPart[],
    sender,
    ...(author ? { assistantId: author.assistantId } : {}),
    createdAt: iso(item.createdAt),
  };
}
