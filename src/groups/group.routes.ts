import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { forbidden, notFound } from '../http/errors';
import { readLastEventId } from '../http/sse';
import type { AppDeps } from '../deps';
import type { GroupChat } from '../db/schema';
import type { Tx, Work } from '../db/work';
import {
  createGroupChat,
  countLiveInvitesBy,
  createGroupInvite,
  findGroupByInvite,
  findGroupForUser,
  listGroupMembers,
  listGroupsOfUser,
  lockGroupForUser,
  memberCountsOf,
  type GroupSettings,
} from './group.store';
import { listGroupItems } from './group-message.store';
import { changeGroupSettings, checkGroupModel, checkGroupsCap, deleteGroup, joinGroup, leaveGroup, sendGroupMessage } from './group.service';
import { checkCap } from '../http/user-caps';
import { openGroupStream } from './group-stream';
import { startFollowUpIfAddressed } from './group-assistant';
import { checkGroupAssistant } from './group-answerer';
import { apiKeyOf } from '../usage/meter-calls';
import { GroupEventSchema } from './group-events.schema';
import { assistantSender, formerMember, groupChatOf, GroupChatSchema, groupMessageOf, GroupMessageSchema, MemberSchema } from './group.view';
import { iso } from '../ids';
import { HOUR_MS } from '../time';

const GroupRef = t.Object({ groupChatId: t.String({ minLength: 1, maxLength: 100 }) });
const Success = t.Object({ success: t.Boolean() });
/** A page of groupChat/listMessages: the schema documents the default the handler applies. */
const MESSAGE_PAGE = { minimum: 1, maximum: 200, default: 50 };

/** The group, if the caller is a member: unknown → 404, not a member → 403. */
function memberGroupOf(found: { group: GroupChat; isMember: boolean } | undefined): GroupChat {
  if (!found) throw notFound();
  if (!found.isMember) throw forbidden();
  return found.group;
}

const memberGroup = async (deps: AppDeps, groupChatId: string, userId: string) =>
  memberGroupOf(await deps.store.read((tx) => findGroupForUser(tx, groupChatId, userId)));

/** The same check inside a write that records an event (the group locked first on PostgreSQL). */
function* memberGroupForWrite(tx: Tx, groupChatId: string, userId: string): Work<GroupChat> {
  return memberGroupOf(yield* lockGroupForUser(tx, groupChatId, userId));
}

/** The group, if the caller created it: unknown → 404, anyone else → 403. */
async function ownGroup(deps: AppDeps, groupChatId: string, userId: string): Promise<GroupChat> {
  const found = await deps.store.read((tx) => findGroupForUser(tx, groupChatId, userId));
  if (!found) throw notFound();
  if (found.group.creatorId !== userId) throw forbidden();
  return found.group;
}

/**
 * Change a setting of a group the caller created: `settings` checks the new value (and throws its
 * 400) after the ownership check, so a stranger learns nothing from it.
 */
async function changeOwnGroup(deps: AppDeps, groupChatId: string, userId: string, settings: () => GroupSettings | Promise<GroupSettings>) {
  const group = await ownGroup(deps, groupChatId, userId);
  const updated = await changeGroupSettings(deps, group, await settings());
  // Deleted meanwhile by another request: as if this one came after it.
  if (!updated) throw notFound();
  return groupChatOf(updated);
}

export const groupOperations = [
  defineOperation({
    path: 'groupChat/createGroupChat',
    summary: 'Create a group chat',
    description:
      'Creates the group and its conversation, with the caller as creator, first member and writer. `intelligentResponses` starts on. A caller who belongs to PARLEY_GROUPS_MAX_PER_USER groups (made or joined): 409.',
    input: t.Object({ name: t.String({ minLength: 1, maxLength: 200 }) }),
    output: GroupChatSchema,
    errors: [403, 409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) =>
      groupChatOf(
        await deps.store.write(function* (tx) {
          yield* checkGroupsCap(tx, user.id, deps.config.groupsMaxPerUser);
          return yield* createGroupChat(tx, { name: input.name, creatorId: user.id }, deps.now());
        }),
      ),
  }),
  defineOperation({
    path: 'groupChat/deleteGroupChat',
    summary: 'Delete a group chat (creator only)',
    description:
      'Removes the group, its members, invites, messages, stored events and conversation. Open streams receive `group.deleted` and close. 403 for anyone but the creator, 404 for an unknown group.',
    input: GroupRef,
    output: Success,
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      // Deleted meanwhile by another request: as if this one came after it.
      if (!(await deleteGroup(deps, await ownGroup(deps, input.groupChatId, user.id)))) throw notFound();
      return { success: true };
    },
  }),
  defineOperation({
    path: 'groupChat/sendGroupMessage',
    summary: 'Send a message to a group chat',
    description:
      'Stores the message in the group conversation, then publishes `message.created` to subscribers. When intelligent responses are on and the message mentions the assistant (`@ai`), the assistant answers in the group (see docs/realtime.md).',
    input: t.Object({ groupChatId: t.String({ minLength: 1, maxLength: 100 }), message: t.String({ minLength: 1, maxLength: 20_000 }) }),
    output: GroupMessageSchema,
    errors: [403, 404, 429],
    rateLimit: 'write',
    // 20,000 characters are up to 120 KB when a client escapes each as `\uXXXX`.
    maxBodyBytes: 128 * 1024,
    handler: async ({ input, user, principal, deps, requestId }) => {
      const { group, message } = await sendGroupMessage(deps, (tx) => memberGroupForWrite(tx, input.groupChatId, user.id), user, input.message);
      // The member who addressed the assistant pays for its answer (docs/usage.md).
      startFollowUpIfAddressed(deps, group, message, requestId, { userId: user.id, tier: user.subscriptionTier, apiKeyId: apiKeyOf(principal) });
      return message;
    },
  }),
  defineOperation({
    path: 'groupChat/subscribeToGroup',
    summary: "Stream a group's realtime events",
    description:
      'Server-sent events: `message.created`, `member.joined`, `member.left`, `group.updated`, `group.deleted` and the assistant\'s progress, with heartbeat comments. Send `Last-Event-ID` to resume without gap or duplicate. 403 when the caller is not a member or the group does not exist (nothing leaks about other groups); 429 past the per-user stream limit.',
    input: GroupRef,
    output: GroupEventSchema,
    kind: 'sse',
    errors: [403, 429],
    handler: async ({ input, user, deps, request }) => {
      // A push stream: the operation layer makes its response (src/http/push-stream.ts). It
      // checks the membership itself, after joining the group's fan-out (group-stream.ts).
      const stream = await openGroupStream(deps, { groupId: input.groupChatId, userId: user.id, lastEventId: readLastEventId(request) });
      if (!stream) throw forbidden();
      return stream;
    },
  }),
  defineOperation({
    path: 'groupChat/createInvite',
    summary: 'Create an invite code for a group chat',
    description:
      'Any member may invite. The code can be used by several people until it expires (`PARLEY_GROUP_INVITE_TTL_HOURS`). A caller who made PARLEY_GROUP_INVITES_MAX_PER_USER codes that have not expired: 409.',
    input: GroupRef,
    output: t.Object({ code: t.String(), expiresAt: t.String({ format: 'date-time' }) }),
    errors: [403, 404, 409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const group = await memberGroup(deps, input.groupChatId, user.id);
      const now = deps.now();
      const max = deps.config.groupInvitesMaxPerUser;
      const invite = await deps.store.write(function* (tx) {
        yield* checkCap(tx, 'groupInvitesMaxPerUser', user.id, max, countLiveInvitesBy(tx, user.id, now), (n) => [
          `${n} invite codes you made have not expired yet`,
          `Use those, or wait until some expire (after ${deps.config.groupInviteTtlHours} hours).`,
        ]);
        return yield* createGroupInvite(tx, { groupId: group.id, createdBy: user.id, ttlMs: deps.config.groupInviteTtlHours * HOUR_MS }, now);
      });
      return { code: invite.code, expiresAt: iso(invite.expiresAt) };
    },
  }),
  defineOperation({
    path: 'groupChat/joinGroup',
    summary: 'Join a group chat with an invite code',
    description:
      'Makes the caller a member and a writer of the group conversation; publishes `member.joined`. Joining again is harmless. 404 for an unknown or expired code; 409 for a caller who belongs to PARLEY_GROUPS_MAX_PER_USER groups already.',
    input: t.Object({ code: t.String({ minLength: 1, maxLength: 200 }) }),
    output: GroupChatSchema,
    errors: [404, 409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const group = await deps.store.read((tx) => findGroupByInvite(tx, input.code, deps.now()));
      if (!group) throw notFound();
      // Undefined: the group was deleted meanwhile, and its invites with it.
      const joined = await joinGroup(deps, group, user);
      if (!joined) throw notFound();
      return groupChatOf(joined);
    },
  }),
  defineOperation({
    path: 'groupChat/leaveGroup',
    summary: 'Leave a group chat',
    description: "Publishes `member.left` and closes the caller's open streams of the group. The creator cannot leave (403): they delete the group instead.",
    input: GroupRef,
    output: Success,
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const group = await memberGroup(deps, input.groupChatId, user.id);
      if (group.creatorId === user.id) throw forbidden();
      return { success: await leaveGroup(deps, group, user) };
    },
  }),
  defineOperation({
    path: 'groupChat/listMembers',
    summary: 'The members of a group chat',
    input: GroupRef,
    output: t.Object({ members: t.Array(MemberSchema) }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const group = await memberGroup(deps, input.groupChatId, user.id);
      const members = (await deps.store.read((tx) => listGroupMembers(tx, group.id))).map((m) => ({ ...m, joinedAt: iso(m.joinedAt), isCreator: m.id === group.creatorId }));
      return { members };
    },
  }),
  defineOperation({
    path: 'groupChat/listMessages',
    summary: 'Messages of a group chat, newest page first',
    description: 'The `limit` (default 50, at most 200) newest messages before the message `before` (or the newest), oldest first; `hasMore` says whether older ones exist.',
    input: t.Object({
      groupChatId: t.String({ minLength: 1, maxLength: 100 }),
      before: t.Optional(t.String({ maxLength: 100 })),
      limit: t.Optional(t.Integer(MESSAGE_PAGE)),
    }),
    output: t.Object({ messages: t.Array(GroupMessageSchema), hasMore: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const group = await memberGroup(deps, input.groupChatId, user.id);
      const page = await deps.store.read((tx) => listGroupItems(tx, group.conversationId, { beforeId: input.before, limit: input.limit ?? MESSAGE_PAGE.default }));
      const messages = page.items.map((i) => {
        const author = i.assistantId ? { assistantId: i.assistantId, name: i.assistantName ?? '' } : undefined;
        if (i.role === 'assistant') return groupMessageOf(i, assistantSender(author?.name ?? deps.config.aiHandle), author);
        return groupMessageOf(i, i.authorId ? { id: i.authorId, name: i.senderName ?? '', image: i.senderImage ?? '' } : formerMember);
      });
      return { messages, hasMore: page.hasMore };
    },
  }),
  defineOperation({
    path: 'groupChat/listGroupChats',
    summary: 'The group chats the caller belongs to',
    description: 'Most recently active first, each with its `memberCount`.',
    input: t.Object({}),
    output: t.Object({ groupChats: t.Array(t.Composite([GroupChatSchema, t.Object({ memberCount: t.Integer({ minimum: 1 }) })])) }),
    handler: async ({ user, deps }) => {
      const { groups, counts } = await deps.store.read(function* (tx) {
        const groups = yield* listGroupsOfUser(tx, user.id);
        return { groups, counts: yield* memberCountsOf(tx, groups.map((g) => g.id)) };
      });
      return { groupChats: groups.map((g) => ({ ...groupChatOf(g), memberCount: counts.get(g.id) ?? 0 })) };
    },
  }),
  defineOperation({
    path: 'groupChat/setIntelligentResponses',
    summary: 'Turn AI answers in a group chat on or off (creator only)',
    input: t.Object({ groupChatId: t.String({ minLength: 1, maxLength: 100 }), enabled: t.Boolean() }),
    output: GroupChatSchema,
    errors: [403, 404],
    handler: ({ input, user, deps }) => changeOwnGroup(deps, input.groupChatId, user.id, () => ({ intelligentResponses: input.enabled })),
  }),
  defineOperation({
    path: 'groupChat/setAssistant',
    summary: 'Choose the shared assistant that answers @ai in a group chat (creator only)',
    description:
      "`assistantId`: a shared assistant the creator may use (`assistants/list`, `shared: true`), or null for Parley's own. One the creator may not use, or their own: 400 saying which. Its instructions, model and tools answer `@ai`; members see the change as `group.updated` (docs/groups.md).",
    input: t.Object({ groupChatId: t.String({ minLength: 1, maxLength: 100 }), assistantId: t.Union([t.String({ minLength: 1, maxLength: 100 }), t.Null()]) }),
    output: GroupChatSchema,
    errors: [400, 403, 404],
    handler: ({ input, user, deps }) =>
      changeOwnGroup(deps, input.groupChatId, user.id, async () => ({
        assistantId: input.assistantId === null ? null : (await checkGroupAssistant(deps, input.assistantId, user)).id,
      })),
  }),
  defineOperation({
    path: 'groupChat/setModel',
    summary: 'Choose the model that answers in a group chat (creator only)',
    description:
      "`model`: a catalogue id from `chat/listModels`, or null for the server's group default. A model that is unknown, hidden, disabled or not in the creator's subscription tier is a 400 saying which. Members see the change as `group.updated`.",
    input: t.Object({ groupChatId: t.String({ minLength: 1, maxLength: 100 }), model: t.Union([t.String({ minLength: 1, maxLength: 300 }), t.Null()]) }),
    output: GroupChatSchema,
    errors: [400, 403, 404],
    handler: ({ input, user, deps }) =>
      changeOwnGroup(deps, input.groupChatId, user.id, async () => ({ model: input.model === null ? null : await checkGroupModel(deps, input.model, user) })),
  }),
];
