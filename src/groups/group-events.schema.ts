import { t } from 'elysia';
import { GroupChatSchema, GroupMessageSchema, WebSearchPartSchema } from './group.view';

const Member = t.Object({ id: t.String(), name: t.String(), image: t.String() });
const ReplyTo = { replyTo: t.String({ description: 'id of the user message the assistant answers' }) };

/** Every kind of `data` on the group stream (docs/realtime.md describes each). */
export const GroupEventSchema = t.Union([
  t.Object({ type: t.Literal('message.created'), message: GroupMessageSchema, replyTo: t.Optional(t.String()) }),
  t.Object({ type: t.Literal('member.joined'), member: Member }),
  t.Object({ type: t.Literal('member.left'), member: Member }),
  t.Object({ type: t.Literal('group.updated'), groupChat: GroupChatSchema }),
  t.Object({ type: t.Literal('group.deleted'), groupChatId: t.String() }),
  t.Object({ type: t.Literal('stream.reset'), reason: t.Union([t.Literal('events_expired'), t.Literal('unknown_event_id')]) }),
  t.Object({
    type: t.Literal('assistant.started'),
    ...ReplyTo,
    assistantId: t.Optional(t.String({ description: 'the shared assistant answering (absent: Parley\'s own)' })),
    name: t.Optional(t.String({ description: 'its name, as the answer will be signed' })),
  }),
  t.Object({ type: t.Literal('assistant.text.delta'), ...ReplyTo, delta: t.String() }),
  t.Object({ type: t.Literal('assistant.web_search.in_progress'), ...ReplyTo, itemId: t.String(), part: WebSearchPartSchema }),
  t.Object({
    type: t.Literal('assistant.web_search.completed'),
    ...ReplyTo,
    itemId: t.String(),
    results: t.Array(t.Object({ link: t.String(), title: t.String(), snippet: t.String() })),
  }),
  t.Object({
    type: t.Literal('assistant.failed'),
    ...ReplyTo,
    reason: t.Union([t.Literal('no_provider'), t.Literal('provider_error')]),
    message: t.String(),
  }),
]);
