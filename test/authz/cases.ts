import type { TestContext, TestUser } from '../helpers';
import { appendItem, createConversation } from '../../src/chat/conversation.store';
import { createWidget } from '../../src/widgets/widget.store';
import { getOrCreateActiveThread } from '../../src/widgets/widget-thread.store';
import { addBookmarkItem, createBookmarkGroup } from '../../src/bookmarks/bookmark.store';
import { createResponse } from '../../src/chat/response.store';
import { createGroupChat } from '../../src/groups/group.store';
import { claimBlob, insertFile } from '../../src/files/file.store';
import { insertSupportMessage, insertSupportThread } from '../../src/support/support.store';
import { addMemory } from '../../src/memory/memory.store';
import { findOffer, insertOffer } from '../../src/chat/share.store';
import { insertApproval } from '../../src/tools/approval.store';
import { insertMcpServer } from '../../src/mcp/mcp-server.store';
import { createClient, createGrant } from '../../src/mcp-server/oauth/oauth.store';
import { issueTokens } from '../../src/mcp-server/oauth/oauth-tokens';

/**
 * The authorisation matrix's registry: ONE ROW PER OPERATION of `operations` (src/app.ts).
 * test/authz/matrix.test.ts fails for an operation without a row, so a new operation cannot
 * skip the matrix. Every operation is checked for 401 on its own; the row says what happens when
 * the caller names another user's resource:
 *
 *   'chat/deleteConversation': foreign(404, async ({ ctx, owner }) => ({
 *     conversationId: (await ctx.json('chat/createConversation', {}, owner)).body.id,
 *   })),
 *   'preferences/get': NO_RESOURCE,
 *
 * `setup` runs with `owner` (the other user) and returns the input the caller will send. The
 * expected status must be one the operation lists in `errors` (so OpenAPI documents it). For an
 * operation restricted to some callers rather than to a resource's owner (e.g. internal-domain
 * only), use `foreign` with a valid input: the matrix's caller is an ordinary user.
 */

export interface ForeignSetup {
  ctx: TestContext;
  /** The user who owns the resource. */
  owner: TestUser;
  /** The user who will try to use it. */
  caller: TestUser;
}

export type AuthzCase =
  | { kind: 'none' }
  | { kind: 'public' }
  | { kind: 'foreign'; status: 403 | 404; setup: (s: ForeignSetup) => unknown | Promise<unknown> };

/** The operation names no resource: it acts on the caller's own data only. */
export const NO_RESOURCE: AuthzCase = { kind: 'none' };

/**
 * The operation is `public: true` (answers without a credential, e.g. the sign-in provider list).
 * The matrix checks that the row and the operation agree, so nothing becomes public by accident.
 */
export const PUBLIC: AuthzCase = { kind: 'public' };

export const foreign = (status: 403 | 404, setup: (s: ForeignSetup) => unknown | Promise<unknown>): AuthzCase => ({
  kind: 'foreign',
  status,
  setup,
});

/** An assistant of the owner's own (private). */
const ownersAssistant = async (ctx: TestContext, owner: TestUser): Promise<string> => (await ctx.json('assistants/create', { name: 'theirs' }, owner)).body.assistant.id;

export const authzCases: Record<string, AuthzCase> = {
  // --- auth ---
  'auth/createApiKey': NO_RESOURCE,
  'auth/listApiKeys': NO_RESOURCE,
  'auth/revokeApiKey': foreign(403, ({ owner }) => ({ keyId: owner.keyId })),
  'auth/getSession': NO_RESOURCE,
  'auth/signOut': NO_RESOURCE,
  'auth/listSessions': NO_RESOURCE,
  'auth/revokeSession': foreign(403, ({ owner }) => ({ sessionId: owner.sessionId })),
  'auth/listProviders': PUBLIC,
  // --- account ---
  'preferences/get': NO_RESOURCE,
  'preferences/update': NO_RESOURCE,
  'preferences/getAccountType': NO_RESOURCE,
  'preferences/setAccountType': NO_RESOURCE,
  'subscription/getStatus': NO_RESOURCE,
  // --- chat ---
  'chat/listConversations': NO_RESOURCE,
  'chat/getConversation': foreign(403, async ({ ctx, owner }) => ({ conversationId: (await ownersConversation(ctx, owner)).id })),
  'chat/renameConversation': foreign(403, async ({ ctx, owner }) => ({ conversationId: (await ownersConversation(ctx, owner)).id, title: 'mine now' })),
  'chat/shareConversation': foreign(403, async ({ ctx, owner, caller }) => ({ conversationId: (await ownersConversation(ctx, owner)).id, email: caller.user.email })),
  // A share is addressed to one user: anyone else answering it gets 403, whoever else it names.
  'chat/listPendingShares': NO_RESOURCE,
  'chat/listSentShares': NO_RESOURCE,
  'chat/acceptShare': foreign(403, async ({ ctx, owner }) => ({ shareId: await ownersOffer(ctx, owner) })),
  'chat/declineShare': foreign(403, async ({ ctx, owner }) => ({ shareId: await ownersOffer(ctx, owner) })),
  'chat/withdrawShare': foreign(403, async ({ ctx, owner }) => ({ shareId: await ownersOffer(ctx, owner) })),
  'chat/importConversation': NO_RESOURCE,
  'chat/branchConversation': foreign(403, async ({ ctx, owner }) => {
    const c = await ownersConversation(ctx, owner);
    return { conversationId: c.id, fromItemId: (await ctx.store.read((tx) => appendItem(tx, { conversationId: c.id, role: 'user', content: 'x' }))).id };
  }),
  'chat/deleteConversation': foreign(403, async ({ ctx, owner }) => ({ conversationId: (await ownersConversation(ctx, owner)).id })),
  'chat/resumeStream': foreign(404, async ({ ctx, owner }) => ({ responseId: await ownersResponse(ctx, owner) })),
  'chat/cancelResponse': foreign(404, async ({ ctx, owner }) => ({ responseId: await ownersResponse(ctx, owner) })),
  // A call of the owner's turn waiting for the owner's answer.
  'chat/approveToolCall': foreign(404, async ({ ctx, owner }) => {
    const responseId = await ownersResponse(ctx, owner);
    await ctx.store.write((tx) =>
      insertApproval(tx, { responseId, itemId: 'call_1', callKey: 'r:call_1', toolName: 'search_history', source: 'history', arguments: {}, expiresAt: Date.now() + 60_000 }, Date.now()),
    );
    return { responseId, itemId: 'call_1', decision: 'approve' };
  }),
  'chat/listToolRules': foreign(403, async ({ ctx, owner }) => ({ conversationId: (await ownersConversation(ctx, owner)).id })),
  'chat/deleteToolRule': foreign(403, async ({ ctx, owner }) => ({ conversationId: (await ownersConversation(ctx, owner)).id, toolName: 'search_history' })),
  // The interface lists no 403/404 for these: another user's conversation is refused inside a 200
  // answer (`success: false` + reason, `canWrite: false`, an in-stream `error` event), which
  // test/chat-conversations.test.ts and test/chat-stream.test.ts check.
  'chat/truncateConversationFromItem': NO_RESOURCE,
  'chat/canWriteConversation': NO_RESOURCE,
  'chat/setConversationStudyMode': NO_RESOURCE,
  'chat/streamDeepResearch': NO_RESOURCE,
  'chat/stream': NO_RESOURCE,
  'chat/listModels': NO_RESOURCE,
  // --- widgets ---
  'widget/get': foreign(403, async ({ ctx, owner }) => ({ widgetId: (await ownersWidget(ctx, owner)).id })),
  'widget/getOrCreateThread': foreign(403, async ({ ctx, owner }) => ({ widgetId: (await ownersWidget(ctx, owner)).id })),
  'widget/addThreadMessage': foreign(403, async ({ ctx, owner }) => ({ threadId: await ownersThread(ctx, owner), data: { text: 'hi' } })),
  'widget/archiveThread': foreign(403, async ({ ctx, owner }) => ({ threadId: await ownersThread(ctx, owner) })),
  'widget/listThreadMessages': foreign(403, async ({ ctx, owner }) => ({ threadId: await ownersThread(ctx, owner) })),
  'widget/deleteThread': foreign(403, async ({ ctx, owner }) => ({ threadId: await ownersThread(ctx, owner) })),
  // --- bookmarks ---
  'bookmarks/createGroup': NO_RESOURCE,
  'bookmarks/listGroups': NO_RESOURCE,
  'bookmarks/addItem': foreign(403, async ({ ctx, owner }) => ({
    groupId: (await ctx.store.read((tx) => createBookmarkGroup(tx, owner.user.id, 'theirs', Date.now()))).id,
    conversationId: (await ctx.store.read((tx) => createConversation(tx, { ownerId: owner.user.id }))).id,
  })),
  'bookmarks/removeItem': foreign(403, async ({ ctx, owner }) => {
    const groupId = (await ctx.store.read((tx) => createBookmarkGroup(tx, owner.user.id, 'theirs', Date.now()))).id;
    const conversationId = (await ctx.store.read((tx) => createConversation(tx, { ownerId: owner.user.id }))).id;
    return { id: (await ctx.store.read((tx) => addBookmarkItem(tx, { groupId, conversationId }, Date.now()))).id };
  }),
  'bookmarks/deleteGroup': foreign(403, async ({ ctx, owner }) => ({ id: (await ctx.store.read((tx) => createBookmarkGroup(tx, owner.user.id, 'theirs', Date.now()))).id })),
  'files/upload': NO_RESOURCE,
  'files/listFiles': NO_RESOURCE,
  'files/searchFiles': NO_RESOURCE,
  'files/getFile': foreign(404, async ({ ctx, owner }) => ({ fileId: await theirFile(ctx, owner) })),
  'files/deleteFile': foreign(404, async ({ ctx, owner }) => ({ fileId: await theirFile(ctx, owner) })),
  // --- memories: another user's memory is 403, as a bookmark group ---
  // --- assistants --- (someone else's own assistant is not seen at all: 404)
  'assistants/list': NO_RESOURCE,
  'assistants/create': NO_RESOURCE,
  'assistants/get': foreign(404, async ({ ctx, owner }) => ({ assistantId: await ownersAssistant(ctx, owner) })),
  'assistants/update': foreign(404, async ({ ctx, owner }) => ({ assistantId: await ownersAssistant(ctx, owner), name: 'mine now' })),
  'assistants/delete': foreign(404, async ({ ctx, owner }) => ({ assistantId: await ownersAssistant(ctx, owner) })),
  'assistants/setAvatar': foreign(404, async ({ ctx, owner }) => ({ assistantId: await ownersAssistant(ctx, owner), dataUrl: 'data:image/png;base64,AAAA' })),
  'assistants/removeAvatar': foreign(404, async ({ ctx, owner }) => ({ assistantId: await ownersAssistant(ctx, owner) })),
  'memories/listMemories': NO_RESOURCE,
  'memories/addMemory': NO_RESOURCE,
  'memories/updateMemory': foreign(403, async ({ ctx, owner }) => ({ id: await ownersMemory(ctx, owner), content: 'mine now' })),
  'memories/deleteMemory': foreign(403, async ({ ctx, owner }) => ({ id: await ownersMemory(ctx, owner) })),
  'memories/deleteAllMemories': NO_RESOURCE,
  // --- MCP clients' OAuth grants (src/mcp-server/oauth/): the client ids are no one's ---
  'mcpAccess/checkAuthorization': NO_RESOURCE,
  'mcpAccess/approveAuthorization': NO_RESOURCE,
  'mcpAccess/denyAuthorization': NO_RESOURCE,
  'mcpAccess/listGrants': NO_RESOURCE,
  'mcpAccess/revokeGrant': foreign(404, async ({ ctx, owner }) => ({ grantId: await ownersGrant(ctx, owner) })),
  // --- feedback: an answer in another user's conversation is 403, as a bookmark's conversation ---
  'feedback/setFeedback': foreign(403, async ({ ctx, owner }) => ({ itemId: await ownersAnswer(ctx, owner), rating: 'down' })),
  'feedback/getFeedback': foreign(403, async ({ ctx, owner }) => ({ conversationId: (await ownersConversation(ctx, owner)).id })),
  'feedback/deleteFeedback': foreign(403, async ({ ctx, owner }) => ({ itemId: await ownersAnswer(ctx, owner) })),
  // --- credits and images act on the caller's own balance and on the given bytes ---
  'credits/getBalance': NO_RESOURCE,
  'credits/grantAdReward': NO_RESOURCE,
  'usage/getUsage': NO_RESOURCE,
  'usage/listCalls': NO_RESOURCE,
  'images/convertImage': NO_RESOURCE,
  // --- voice ---
  'audio/transcribe': NO_RESOURCE,
  'audio/speak': foreign(403, async ({ ctx, owner }) => {
    const c = await ownersConversation(ctx, owner);
    return { itemId: (await ctx.store.read((tx) => appendItem(tx, { conversationId: c.id, role: 'assistant', content: 'their answer' }))).id };
  }),
  // --- notifications ---
  'notifications/registerPushToken': NO_RESOURCE,
  'notifications/unregisterPushToken': NO_RESOURCE,
  // Restricted to the internal e-mail domain: an ordinary caller with a valid input gets 403.
  'notifications/sendTestWebhookNotification': foreign(403, async ({ ctx, owner }) => ({
    conversationId: (await ctx.store.read((tx) => createConversation(tx, { ownerId: owner.user.id }))).id,
    status: 'completed',
  })),
  // --- group chats: a stranger to the group gets 403 (creator-only operations too) ---
  'groupChat/createGroupChat': NO_RESOURCE,
  'groupChat/listGroupChats': NO_RESOURCE,
  // An invite code is a capability handed to the joiner on purpose: joining with it is the point.
  'groupChat/joinGroup': NO_RESOURCE,
  'groupChat/deleteGroupChat': foreign(403, async ({ ctx, owner }) => ({ groupChatId: await ownersGroup(ctx, owner) })),
  'groupChat/sendGroupMessage': foreign(403, async ({ ctx, owner }) => ({ groupChatId: await ownersGroup(ctx, owner), message: 'hi' })),
  'groupChat/subscribeToGroup': foreign(403, async ({ ctx, owner }) => ({ groupChatId: await ownersGroup(ctx, owner) })),
  'groupChat/createInvite': foreign(403, async ({ ctx, owner }) => ({ groupChatId: await ownersGroup(ctx, owner) })),
  'groupChat/leaveGroup': foreign(403, async ({ ctx, owner }) => ({ groupChatId: await ownersGroup(ctx, owner) })),
  'groupChat/listMembers': foreign(403, async ({ ctx, owner }) => ({ groupChatId: await ownersGroup(ctx, owner) })),
  'groupChat/listMessages': foreign(403, async ({ ctx, owner }) => ({ groupChatId: await ownersGroup(ctx, owner) })),
  'groupChat/setIntelligentResponses': foreign(403, async ({ ctx, owner }) => ({ groupChatId: await ownersGroup(ctx, owner), enabled: false })),
  'groupChat/setModel': foreign(403, async ({ ctx, owner }) => ({ groupChatId: await ownersGroup(ctx, owner), model: null })),
  'groupChat/setAssistant': foreign(403, async ({ ctx, owner }) => ({ groupChatId: await ownersGroup(ctx, owner), assistantId: null })),
  // --- support: another user's thread is 403, as a bookmark group ---
  'support/createThread': NO_RESOURCE,
  'support/listThreads': NO_RESOURCE,
  'support/getThread': foreign(403, async ({ ctx, owner }) => ({ threadId: await ownersSupportThread(ctx, owner) })),
  'support/sendMessage': foreign(403, async ({ ctx, owner }) => ({ threadId: await ownersSupportThread(ctx, owner), message: 'mine now' })),
  'support/closeThread': foreign(403, async ({ ctx, owner }) => ({ threadId: await ownersSupportThread(ctx, owner) })),
  // --- administration: admins only, so the matrix's ordinary caller gets 403 with a valid input ---
  'admin/listNews': foreign(403, () => ({})),
  'admin/postNews': foreign(403, () => ({ title: 'Not from a user', body: 'No.' })),
  'admin/deleteNews': foreign(403, () => ({ id: '0190a000-0000-7000-8000-000000000000' })),
  'admin/listSupportThreads': foreign(403, () => ({})),
  'admin/getSupportThread': foreign(403, async ({ ctx, owner }) => ({ threadId: (await ctx.store.write((tx) => insertSupportThread(tx, owner.user.id, 'Help', Date.now()))).id })),
  'admin/replySupport': foreign(403, async ({ ctx, owner }) => ({ threadId: (await ctx.store.write((tx) => insertSupportThread(tx, owner.user.id, 'Help', Date.now()))).id, message: 'Not an admin' })),
  'admin/listMiniApps': foreign(403, () => ({})),
  'admin/addMiniApp': foreign(403, () => ({ name: 'Calc', url: 'https://calc.example.org/' })),
  'admin/updateMiniApp': foreign(403, () => ({ id: 'none', name: 'Calc' })),
  'admin/removeMiniApp': foreign(403, () => ({ id: 'none' })),
  'admin/listUsers': foreign(403, () => ({})),
  'admin/createUser': foreign(403, () => ({ email: 'new-by-caller@example.org' })),
  'admin/updateUser': foreign(403, ({ owner }) => ({ userId: owner.user.id, tier: 'PRO', admin: true })),
  'admin/getUsageQuotas': foreign(403, () => ({})),
  'admin/setUsageTier': foreign(403, () => ({ name: 'FREE', period: 'day', tokens: 0 })),
  'admin/removeUsageTier': foreign(403, () => ({ name: 'FREE' })),
  'admin/setModelPrice': foreign(403, () => ({ model: 'x/y', inputPerMillion: 0 })),
  'admin/removeModelPrice': foreign(403, () => ({ model: 'x/y' })),
  'admin/getUsage': foreign(403, ({ owner }) => ({ userId: owner.user.id })),
  'admin/grantCredits': foreign(403, ({ caller }) => ({ userId: caller.user.id, amount: 1000 })),
  'admin/listApiKeys': foreign(403, ({ owner }) => ({ userId: owner.user.id })),
  'admin/createApiKey': foreign(403, ({ owner }) => ({ userId: owner.user.id, name: 'stolen' })),
  'admin/revokeApiKey': foreign(403, ({ owner }) => ({ keyId: owner.keyId })),
  'admin/createBackup': foreign(403, () => ({})),
  'admin/listBackups': foreign(403, () => ({})),
  'admin/downloadBackup': foreign(403, () => ({ name: 'parley-2026-01-01T00-00-00-000Z.db' })),
  'admin/doctor': foreign(403, () => ({})),
  'admin/getSettings': foreign(403, () => ({})),
  'admin/listConnections': foreign(403, () => ({})),
  'admin/getToolSettings': foreign(403, () => ({})),
  'admin/setToolSettings': foreign(403, () => ({ sources: [{ id: 'canvas', enabled: false }] })),
  'admin/addConnection': foreign(403, () => ({ name: 'mine', kind: 'chat', baseUrl: 'http://127.0.0.1:11434/v1' })),
  'admin/updateConnection': foreign(403, () => ({ id: 'env-ai', enabled: false })),
  'admin/removeConnection': foreign(403, () => ({ id: 'env-ai' })),
  'admin/testConnection': foreign(403, () => ({ id: 'env-ai' })),
  'admin/listModelSettings': foreign(403, () => ({})),
  'admin/setModelSettings': foreign(403, () => ({ id: 'env-ai/gpt-4.1-mini', hidden: true })),
  'admin/setDefaultModels': foreign(403, () => ({ chat: 'env-ai/gpt-4.1-mini' })),
  'admin/discoverServers': foreign(403, () => ({})),
  'admin/listMcpServers': foreign(403, () => ({})),
  'admin/addMcpServer': foreign(403, () => ({ name: 'mine', url: 'http://127.0.0.1:9/mcp' })),
  'admin/updateMcpServer': foreign(403, async ({ ctx }) => ({ id: await adminsMcpServer(ctx), enabled: false })),
  'admin/removeMcpServer': foreign(403, async ({ ctx }) => ({ id: await adminsMcpServer(ctx) })),
  'admin/testMcpServer': foreign(403, async ({ ctx }) => ({ id: await adminsMcpServer(ctx) })),
  'admin/setMcpSettings': foreign(403, () => ({ userServers: true })),
  // --- MCP servers of one's own (their rules are tested in test/mcp-users.test.ts) ---
  'mcp/listServers': NO_RESOURCE,
  'mcp/addServer': NO_RESOURCE,
  'mcp/updateServer': foreign(404, async ({ ctx, owner }) => ({ id: await ownersMcpServer(ctx, owner), enabled: false })),
  'mcp/removeServer': foreign(404, async ({ ctx, owner }) => ({ id: await ownersMcpServer(ctx, owner) })),
  'mcp/testServer': foreign(403, async ({ ctx, owner }) => ({ id: await ownersMcpServer(ctx, owner) })),
  'mcp/connectServer': foreign(403, async ({ ctx, owner }) => ({ id: await ownersMcpServer(ctx, owner) })),
  'mcp/disconnectServer': foreign(403, async ({ ctx, owner }) => ({ id: await ownersMcpServer(ctx, owner) })),
  // --- setup (the first admin; the token is the credential) ---
  'setup/getStatus': PUBLIC,
  'setup/checkToken': PUBLIC,
  'setup/createAdmin': PUBLIC,
  // --- the service's own pages: the same for every user, read state the caller's own ---
  'releaseNotes/list': NO_RESOURCE,
  'news/list': NO_RESOURCE,
  'news/markRead': NO_RESOURCE,
  'miniApps/list': NO_RESOURCE,
  'server/getCapabilities': NO_RESOURCE,
};

/** An offer of the owner's conversation to an address of neither user. */
async function ownersOffer(ctx: TestContext, owner: TestUser): Promise<string> {
  const conversationId = (await ownersConversation(ctx, owner)).id;
  await ctx.store.write((tx) => insertOffer(tx, { conversationId, sharerId: owner.user.id, email: 'third@example.org', recipientId: null }, Date.now()));
  return (await ctx.store.read((tx) => findOffer(tx, conversationId, 'third@example.org')))!.id;
}

async function ownersMemory(ctx: TestContext, owner: TestUser): Promise<string> {
  const added = await ctx.store.write((tx) => addMemory(tx, { userId: owner.user.id, content: 'theirs', max: 1000 }, Date.now()));
  if (!added.ok) throw new Error('the owner keeps too many memories');
  return added.memory.id;
}

/** Written through the store, past the open-thread cap: the matrix's owner gets one per row. */
async function ownersSupportThread(ctx: TestContext, owner: TestUser): Promise<string> {
  return ctx.store.write(function* (tx) {
    const thread = yield* insertSupportThread(tx, owner.user.id, 'theirs', Date.now());
    yield* insertSupportMessage(tx, thread.id, { author: 'user', body: 'help' }, Date.now());
    return thread.id;
  });
}

/** An MCP server of the owner's own (written through the store: the setting that lets users add them stays off). */
const ownersMcpServer = async (ctx: TestContext, owner: TestUser) =>
  (await ctx.store.write((tx) => insertMcpServer(tx, { ...MCP_ROW, name: `theirs-${crypto.randomUUID().slice(0, 8)}`, ownerId: owner.user.id }, Date.now()))).id;
const adminsMcpServer = async (ctx: TestContext) => (await ctx.store.write((tx) => insertMcpServer(tx, { ...MCP_ROW, name: `admins-${crypto.randomUUID().slice(0, 8)}` }, Date.now()))).id;
const MCP_ROW = { ownerId: null, name: 'theirs', transport: 'http', url: 'http://127.0.0.1:9/mcp', command: null, secrets: null, auth: 'none', oauthClientId: null, oauthClient: null, approval: 'never', timeoutS: null, enabled: true } as const;

const ownersGroup = async (ctx: TestContext, owner: TestUser) => (await ctx.store.write((tx) => createGroupChat(tx, { name: 'theirs', creatorId: owner.user.id }))).id;

async function ownersWidget(ctx: TestContext, owner: TestUser) {
  const conversation = await ctx.store.read((tx) => createConversation(tx, { ownerId: owner.user.id }));
  await ctx.store.read((tx) => appendItem(tx, { conversationId: conversation.id, role: 'user', content: 'draw me a canvas', authorId: owner.user.id }));
  return await ctx.store.read((tx) => createWidget(tx, { conversationId: conversation.id, responseId: 'r1', widgetType: 'canvas' }, Date.now()));
}

async function ownersThread(ctx: TestContext, owner: TestUser): Promise<string> {
  const widgetId = (await ownersWidget(ctx, owner)).id;
  return (await ctx.store.write((tx) => getOrCreateActiveThread(tx, widgetId, owner.user.id, Date.now(), 1000))).thread.id;
}

async function ownersAnswer(ctx: TestContext, owner: TestUser): Promise<string> {
  const c = await ownersConversation(ctx, owner);
  return (await ctx.store.write((tx) => appendItem(tx, { conversationId: c.id, role: 'assistant', content: 'theirs' }))).id;
}

async function ownersConversation(ctx: TestContext, owner: TestUser) {
  return await ctx.store.read((tx) => createConversation(tx, { ownerId: owner.user.id, title: 'theirs' }));
}

async function ownersResponse(ctx: TestContext, owner: TestUser): Promise<string> {
  const c = await ownersConversation(ctx, owner);
  return (await ctx.store.read((tx) => createResponse(tx, { conversationId: c.id, userId: owner.user.id, kind: 'research', model: 'm', input: { message: 'x' }, status: 'completed' }))).id;
}

/** A file of `owner`'s (its row and its blob's; no bytes are needed to refuse someone else). */
async function theirFile(ctx: TestContext, owner: TestUser): Promise<string> {
  const sha256 = crypto.randomUUID().replaceAll('-', '').padEnd(64, '0');
  return (
    await ctx.store.write(function* (tx) {
      yield* claimBlob(tx, sha256, 5, Date.now());
      return yield* insertFile(tx, { userId: owner.user.id, sha256, filename: 'theirs.txt', mimeType: 'text/plain', kind: 'document', size: 5, width: null, height: null, thumbSha256: null }, Date.now());
    })
  ).id;
}

async function ownersGrant(ctx: TestContext, owner: TestUser): Promise<string> {
  const now = Date.now();
  return (
    await ctx.store.write(function* (tx) {
      const client = yield* createClient(tx, { name: 'Editor', redirectUris: ['http://127.0.0.1/cb'], authMethod: 'none', secretHash: null, clientUri: null }, now);
      return yield* createGrant(tx, { clientId: client.id, userId: owner.user.id, scope: 'mcp' }, issueTokens(now).hashes, now);
    })
  ).id;
}
