import { sql } from 'drizzle-orm';
import { seedUser, type TestContext, type TestUser } from '../helpers';
import type { CapSetting } from '../../src/http/user-caps';
import { appendItem, createConversation } from '../../src/chat/conversation.store';
import { createWidget } from '../../src/widgets/widget.store';
import { createBookmarkGroup } from '../../src/bookmarks/bookmark.store';
import { createGroupChat, createGroupInvite } from '../../src/groups/group.store';
import { writeMcpSettings } from '../../src/mcp/mcp-settings';

/**
 * Every operation that creates rows for the caller (issue 30, item 7), and how each is bounded:
 * the write (or AI) rate limit always, and a per-user cap (a setting) where rows accumulate.
 * test/creates.test.ts fails for an operation in neither this table nor NOT_CREATING, so a new
 * operation is classified when it is added. The admin operations are excepted: admins are trusted.
 *
 * `inputs(ctx, user, n)` makes `n` inputs that each create one more row (their resources made
 * through the stores, outside the count); `held(ctx, user)` counts the rows the cap counts.
 */
export interface CappedCreate {
  cap: CapSetting;
  inputs(ctx: TestContext, user: TestUser, n: number): Promise<unknown[]>;
  held(ctx: TestContext, user: TestUser): Promise<number>;
}

export type CreateBound =
  | ({ kind: 'cap' } & CappedCreate)
  /** Rows over the cap push the oldest out (push tokens: devices come and go). */
  | ({ kind: 'evicts' } & CappedCreate)
  /** Bounded otherwise, said in `why` (and by the rate limit). */
  | { kind: 'bounded'; why: string };

const count = async (ctx: TestContext, query: ReturnType<typeof sql>) => Number((await ctx.query<{ n: number | string }>(query))[0]!.n);
const many = <T>(n: number, make: (i: number) => T | Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => make(i)));

async function conversationWithItems(ctx: TestContext, user: TestUser, n: number, role: 'user' | 'assistant' = 'user') {
  const c = await ctx.store.write((tx) => createConversation(tx, { ownerId: user.user.id }));
  const items = [];
  for (let i = 0; i < n; i++) items.push(await ctx.store.write((tx) => appendItem(tx, { conversationId: c.id, role, content: `answer ${i}` })));
  return { conversationId: c.id, itemIds: items.map((i) => i.id) };
}

export const creates: Record<string, CreateBound> = {
  'assistants/create': {
    kind: 'cap',
    cap: 'assistantsMaxPerUser',
    inputs: async (_ctx, _u, n) => many(n, (i) => ({ name: `assistant ${i}` })),
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM assistants WHERE owner_id = ${u.user.id}`),
  },
  'auth/createApiKey': {
    kind: 'cap',
    cap: 'apiKeysMaxPerUser',
    inputs: async (_ctx, _u, n) => many(n, (i) => ({ name: `key ${i}` })),
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM api_keys WHERE user_id = ${u.user.id} AND revoked_at IS NULL`),
  },
  'groupChat/createGroupChat': {
    kind: 'cap',
    cap: 'groupsMaxPerUser',
    inputs: async (_ctx, _u, n) => many(n, (i) => ({ name: `group ${i}` })),
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM group_members WHERE user_id = ${u.user.id}`),
  },
  'groupChat/joinGroup': {
    kind: 'cap',
    cap: 'groupsMaxPerUser',
    // Groups of someone else (a user made here), each with its invite.
    async inputs(ctx, _u, n) {
      const hostId = (await seedUser(ctx.store, { email: `host-${crypto.randomUUID()}@example.org` })).user.id;
      return many(n, async (i) => {
        const group = await ctx.store.write((tx) => createGroupChat(tx, { name: `theirs ${i}`, creatorId: hostId }));
        return { code: (await ctx.store.write((tx) => createGroupInvite(tx, { groupId: group.id, createdBy: hostId, ttlMs: 3_600_000 }))).code };
      });
    },
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM group_members WHERE user_id = ${u.user.id}`),
  },
  'groupChat/createInvite': {
    kind: 'cap',
    cap: 'groupInvitesMaxPerUser',
    async inputs(ctx, u, n) {
      const group = await ctx.store.write((tx) => createGroupChat(tx, { name: 'mine', creatorId: u.user.id }));
      return many(n, () => ({ groupChatId: group.id }));
    },
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM group_invites WHERE created_by = ${u.user.id}`),
  },
  'bookmarks/createGroup': {
    kind: 'cap',
    cap: 'bookmarkGroupsMaxPerUser',
    inputs: async (_ctx, _u, n) => many(n, (i) => ({ name: `bookmarks ${i}` })),
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM bookmark_groups WHERE user_id = ${u.user.id}`),
  },
  'bookmarks/addItem': {
    kind: 'cap',
    cap: 'bookmarksMaxPerUser',
    async inputs(ctx, u, n) {
      const group = await ctx.store.write((tx) => createBookmarkGroup(tx, u.user.id, 'saved', Date.now()));
      const { conversationId, itemIds } = await conversationWithItems(ctx, u, n);
      return itemIds.map((itemId) => ({ groupId: group.id, conversationId, itemId }));
    },
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM bookmark_items i JOIN bookmark_groups g ON g.id = i.group_id WHERE g.user_id = ${u.user.id}`),
  },
  'feedback/setFeedback': {
    kind: 'cap',
    cap: 'feedbackMaxPerUser',
    inputs: async (ctx, u, n) => (await conversationWithItems(ctx, u, n, 'assistant')).itemIds.map((itemId) => ({ itemId, rating: 'up' })),
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM answer_feedback WHERE user_id = ${u.user.id}`),
  },
  'chat/branchConversation': {
    kind: 'cap',
    cap: 'branchesMaxPerUser',
    async inputs(ctx, u, n) {
      const { conversationId, itemIds } = await conversationWithItems(ctx, u, 1);
      return many(n, () => ({ conversationId, fromItemId: itemIds[0] }));
    },
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM conversation_branches b JOIN conversations c ON c.id = b.conversation_id WHERE c.owner_id = ${u.user.id}`),
  },
  'widget/getOrCreateThread': {
    kind: 'cap',
    cap: 'widgetThreadsMaxPerUser',
    async inputs(ctx, u, n) {
      const { conversationId } = await conversationWithItems(ctx, u, 0);
      return many(n, async () => ({ widgetId: (await ctx.store.write((tx) => createWidget(tx, { conversationId, responseId: 'r', widgetType: 'canvas' }, Date.now()))).id }));
    },
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM widget_threads WHERE user_id = ${u.user.id}`),
  },
  'widget/addThreadMessage': {
    kind: 'cap',
    cap: 'widgetThreadMaxMessages',
    async inputs(ctx, u, n) {
      const { conversationId } = await conversationWithItems(ctx, u, 0);
      const widget = await ctx.store.write((tx) => createWidget(tx, { conversationId, responseId: 'r', widgetType: 'canvas' }, Date.now()));
      const { getOrCreateActiveThread } = await import('../../src/widgets/widget-thread.store');
      const thread = await ctx.store.write((tx) => getOrCreateActiveThread(tx, widget.id, u.user.id, Date.now(), 1000));
      return many(n, (i) => ({ threadId: thread.thread.id, data: { i } }));
    },
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM widget_thread_messages m JOIN widget_threads t ON t.id = m.thread_id WHERE t.user_id = ${u.user.id}`),
  },
  'mcp/addServer': {
    kind: 'cap',
    cap: 'mcpMaxServersPerUser',
    // Users' own servers allowed; public addresses (an IP, so nothing is resolved, and nothing is reached when a server is added).
    inputs: async (ctx, _u, n) => {
      await writeMcpSettings(ctx.store, { userServers: true }, Date.now());
      return many(n, (i) => ({ name: `mine-${i}`, url: `https://93.184.215.${(i % 250) + 1}/mcp` }));
    },
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM mcp_servers WHERE owner_id = ${u.user.id}`),
  },
  'memories/addMemory': {
    kind: 'cap',
    cap: 'memoryMaxPerUser',
    inputs: async (_ctx, _u, n) => many(n, (i) => ({ content: `fact ${i}` })),
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM memories WHERE user_id = ${u.user.id}`),
  },
  'support/createThread': {
    kind: 'cap',
    cap: 'supportMaxOpenThreads',
    inputs: async (_ctx, _u, n) => many(n, (i) => ({ subject: `help ${i}`, message: 'please' })),
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM support_threads WHERE user_id = ${u.user.id} AND status = 'open'`),
  },
  'notifications/registerPushToken': {
    kind: 'evicts',
    cap: 'pushTokensMaxPerUser',
    inputs: async (_ctx, _u, n) => many(n, (i) => ({ token: `ExponentPushToken[device-${i}]`, platform: 'ios' })),
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM push_tokens WHERE user_id = ${u.user.id}`),
  },
  'chat/shareConversation': {
    kind: 'cap',
    cap: 'sharesMaxPendingPerUser',
    async inputs(ctx, u, n) {
      const { conversationId } = await conversationWithItems(ctx, u, 0);
      // Addresses with and without an account alike.
      return many(n, async (i) => ({ conversationId, email: i % 2 ? (await seedUser(ctx.store, { email: `friend-${crypto.randomUUID()}@example.org` })).user.email : `nobody-${i}@example.org` }));
    },
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM conversation_shares WHERE sharer_id = ${u.user.id}`),
  },
  'chat/importConversation': {
    kind: 'cap',
    cap: 'importsMaxPerUser',
    inputs: async (_ctx, _u, n) => many(n, (i) => ({ title: `imported ${i}`, messages: [{ role: 'user', content: `question ${i}` }, { role: 'assistant', content: 'answer' }] })),
    held: (ctx, u) => count(ctx, sql`SELECT count(*) AS n FROM conversations WHERE owner_id = ${u.user.id} AND imported_bytes IS NOT NULL`),
  },
  'chat/acceptShare': { kind: 'bounded', why: 'one writer row per offer received, and offers are capped per owner' },
  'files/upload': { kind: 'bounded', why: 'PARLEY_FILES_MAX_PER_USER and PARLEY_FILES_QUOTA_BYTES (test/files.test.ts)' },
  'mcp/connectServer': { kind: 'bounded', why: 'one sign-in row per user and MCP server, written in place' },
  'assistants/setAvatar': { kind: 'bounded', why: 'one avatar row per assistant (assistants are capped), written in place, at most 64 KB' },
  'support/sendMessage': { kind: 'bounded', why: 'messages of a conversation with the admins: the write rate limit' },
  'groupChat/sendGroupMessage': { kind: 'bounded', why: 'messages of a group: the write rate limit' },
  'chat/stream': { kind: 'bounded', why: 'each turn calls the AI provider: the AI rate limit and PARLEY_RESEARCH_MAX_PER_USER' },
  'chat/streamDeepResearch': { kind: 'bounded', why: 'each turn calls the AI provider: the AI rate limit and PARLEY_RESEARCH_MAX_PER_USER' },
  'news/markRead': { kind: 'bounded', why: 'one read mark per post, and posts are written by admins' },
  'chat/approveToolCall': {
    kind: 'bounded',
    why: 'with scope "conversation", one rule row per conversation, user and tool, replaced in place: at most one per call the model asked about, deleted with the conversation',
  },
  'credits/grantAdReward': { kind: 'bounded', why: 'writes only with PARLEY_ENV=development (a test server)' },
  'mcpAccess/approveAuthorization': { kind: 'bounded', why: 'a one-time code that expires after a minute (pruned hourly), under the write rate limit' },
};

/** Operations that make no row a user could pile up: reads, changes and deletions of what exists, one row per user. */
export const NOT_CREATING = new Set([
  'auth/listApiKeys', 'auth/revokeApiKey', 'auth/getSession', 'auth/signOut', 'auth/listSessions', 'auth/revokeSession', 'auth/listProviders',
  // One preferences row per user, written in place.
  'preferences/get', 'preferences/update', 'preferences/getAccountType', 'preferences/setAccountType', 'subscription/getStatus',
  'chat/listConversations', 'chat/getConversation', 'chat/renameConversation', 'chat/truncateConversationFromItem', 'chat/deleteConversation',
  'chat/canWriteConversation', 'chat/setConversationStudyMode', 'chat/listModels', 'chat/resumeStream', 'chat/cancelResponse',
  'widget/get', 'widget/listThreadMessages', 'widget/archiveThread', 'widget/deleteThread',
  'bookmarks/listGroups', 'bookmarks/removeItem', 'bookmarks/deleteGroup',
  'files/listFiles', 'files/getFile', 'files/searchFiles', 'files/deleteFile',
  'memories/listMemories', 'memories/updateMemory', 'memories/deleteMemory', 'memories/deleteAllMemories',
  'feedback/getFeedback', 'feedback/deleteFeedback',
  'credits/getBalance', 'usage/getUsage', 'usage/listCalls', 'images/convertImage', 'audio/transcribe', 'audio/speak',
  'notifications/unregisterPushToken', 'notifications/sendTestWebhookNotification',
  'groupChat/deleteGroupChat', 'groupChat/subscribeToGroup', 'groupChat/leaveGroup', 'groupChat/listMembers', 'groupChat/listMessages',
  'groupChat/listGroupChats', 'groupChat/setIntelligentResponses', 'groupChat/setModel', 'groupChat/setAssistant',
  'support/listThreads', 'support/getThread', 'support/closeThread',
  'releaseNotes/list', 'news/list', 'miniApps/list', 'server/getCapabilities',
  'mcp/listServers', 'mcp/updateServer', 'mcp/removeServer', 'mcp/testServer', 'mcp/disconnectServer',
  'chat/listPendingShares', 'chat/listSentShares', 'chat/declineShare', 'chat/withdrawShare',
  'mcpAccess/checkAuthorization', 'mcpAccess/denyAuthorization', 'mcpAccess/listGrants', 'mcpAccess/revokeGrant',
  'chat/listToolRules', 'chat/deleteToolRule',
  'assistants/list', 'assistants/get', 'assistants/update', 'assistants/delete', 'assistants/removeAvatar',
  // Public, before any account exists: they make the one first admin and nothing while one exists.
  'setup/getStatus', 'setup/checkToken', 'setup/createAdmin',
]);
