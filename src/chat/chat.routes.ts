import { t } from 'elysia';
import { findGroupByConversationId, groupIdsOfConversations } from '../groups/group.store';
import { deleteGroup } from '../groups/group.service';
import { defineOperation } from '../http/operation';
import { forbidden, invalidInput, notFound } from '../http/errors';
import { checkCap } from '../http/user-caps';
import type { AppDeps } from '../deps';
import type { Conversation, User } from '../db/schema';
import type { Tx, Work } from '../db/work';
import {
  branchConversation,
  canWriteConversation,
  countBranchesOf,
  deleteConversation,
  findBranchOf,
  findConversationById,
  findItemById,
  listConversationsFor,
  listItems,
  truncateFromItem,
  updateConversation,
} from './conversation.store';
import { lastResponsesOf, listRunningInConversation } from './response.store';
import { cancelResponse } from './respond';
import { ConversationSchema, ItemSchema, conversationView, itemView, decodeCursor, encodeCursor } from './chat.view';
import { importConversation, MESSAGE_ROW_BYTES } from './import.store';
import { assistantForBranch } from '../assistants/assistant.store';

/** A conversation brought in (chat/importConversation): bounds that keep one request small. */
export const IMPORT_LIMITS = { messages: 2000, contentChars: 100_000, bodyBytes: 4 * 1024 * 1024 } as const;
const ImportedMessage = t.Object({
  role: t.Union([t.Literal('user'), t.Literal('assistant')]),
  content: t.String({ maxLength: IMPORT_LIMITS.contentChars }),
  createdAt: t.Optional(t.String({ format: 'date-time', description: 'When it was written; kept when it is not in the future or before the message before it.' })),
});

const ConversationId = t.Object({ conversationId: t.String() });
/** A page of chat/listConversations: the schema documents the default the handler applies. */
const CONVERSATION_PAGE = { minimum: 1, maximum: 100, default: 20 };
const Success = t.Object({ success: t.Boolean() });

/** Reasons of an unsuccessful truncate (docs/chat.md). */
export const TRUNCATE_REASONS = { notWritable: 'CONVERSATION_NOT_WRITABLE', itemNotFound: 'ITEM_NOT_FOUND', groupConversation: 'GROUP_CONVERSATION' } as const;

/** 404 unknown, 403 neither owner nor writer. */
function* writableConversation(tx: Tx, user: User, id: string): Work<Conversation> {
  const c = yield* findConversationById(tx, id);
  if (!c) throw notFound();
  if (!(yield* canWriteConversation(tx, id, user.id))) throw forbidden();
  return c;
}

/**
 * Stop the conversation's running AI turns first, so none writes into rows being deleted. A turn
 * started while an earlier one was being cancelled is stopped too: when this returns, normally
 * none is running.
 */
async function stopResponses(deps: AppDeps, conversationId: string) {
  // Bounded all the same: a client starting turns in a loop must not hold this request forever.
  for (let pass = 0; pass < 10; pass++) {
    const running = await deps.store.read((tx) => listRunningInConversation(tx, conversationId));
    if (!running.length) return;
    for (const r of running) await cancelResponse(deps, r);
  }
}

export const chatOperations = [
  defineOperation({
    path: 'chat/listConversations',
    summary: 'The conversations the caller owns or writes to, most recently active first',
    description:
      'Each conversation carries `lastResponse`, its latest AI turn `{id, kind, status}` or null, and `groupChatId`, the group chat it belongs to or null. `kind` keeps only the conversations with at least one turn of that kind (`research`: deep-research runs); `groups: false` leaves group chats out.',
    input: t.Object({
      cursor: t.Optional(t.String()),
      limit: t.Optional(t.Integer(CONVERSATION_PAGE)),
      kind: t.Optional(t.Union([t.Literal('chat'), t.Literal('research')], { description: 'Only conversations with an AI turn of this kind.' })),
      groups: t.Optional(t.Boolean({ description: "Whether group chats' conversations are listed (default true; the web app's chat list leaves them out)." })),
    }),
    output: t.Object({ conversations: t.Array(ConversationSchema), nextCursor: t.Union([t.String(), t.Null()]) }),
    handler: async ({ input, user, deps }) => {
      const limit = input.limit ?? CONVERSATION_PAGE.default;
      // No cursor, or an empty one, is the first page. One this operation did not give out is
      // refused, rather than quietly read as the first page.
      const before = input.cursor ? decodeCursor(input.cursor) : undefined;
      if (input.cursor && !before) throw invalidInput([{ path: ['cursor'], message: 'Not a cursor from chat/listConversations' }]);
      const { rows, page, last, groups } = await deps.store.read(function* (tx) {
        const rows = yield* listConversationsFor(tx, user.id, { limit: limit + 1, before, kind: input.kind, groups: input.groups ?? true });
        const page = rows.slice(0, limit);
        const ids = page.map((c) => c.id);
        return { rows, page, last: yield* lastResponsesOf(tx, ids), groups: yield* groupIdsOfConversations(tx, ids) };
      });
      return {
        conversations: page.map((c) => conversationView(c, undefined, { lastResponse: last.get(c.id) ?? null, groupChatId: groups.get(c.id) ?? null })),
        nextCursor: rows.length > limit ? encodeCursor(page.at(-1)!) : null,
      };
    },
  }),
  defineOperation({
    path: 'chat/getConversation',
    summary: 'A conversation and its items, in order',
    description:
      'Owner or writer only (403); unknown → 404. `branchOf` names the conversation and item it was branched from; `lastResponse` its latest AI turn `{id, kind, status}` or null.',
    input: ConversationId,
    output: t.Object({ conversation: ConversationSchema, items: t.Array(ItemSchema) }),
    errors: [403, 404],
    handler: ({ input, user, deps }) =>
      deps.store.read(function* (tx) {
        const c = yield* writableConversation(tx, user, input.conversationId);
        const extra = { lastResponse: (yield* lastResponsesOf(tx, [c.id])).get(c.id) ?? null, groupChatId: (yield* findGroupByConversationId(tx, c.id))?.id ?? null };
        return { conversation: conversationView(c, yield* findBranchOf(tx, c.id), extra), items: (yield* listItems(tx, c.id)).map(itemView) };
      }),
  }),
  defineOperation({
    path: 'chat/renameConversation',
    summary: 'Rename a conversation',
    description: 'Owner or writer (403); unknown → 404.',
    input: t.Object({ conversationId: t.String(), title: t.String({ maxLength: 200 }) }),
    output: Success,
    errors: [403, 404],
    handler: ({ input, user, deps }) =>
      deps.store.write(function* (tx) {
        yield* writableConversation(tx, user, input.conversationId);
        yield* updateConversation(tx, input.conversationId, { title: input.title.trim() }, deps.now());
        return { success: true };
      }),
  }),
  defineOperation({
    path: 'chat/importConversation',
    summary: 'Bring in a conversation from elsewhere (a ChatGPT export, or a Parley JSON export)',
    description:
      `A new conversation owned by the caller with these messages, in order, at their original times. One conversation a request: a client reads an export file (ChatGPT's \`conversations.json\` is a tree of nodes per conversation; docs/chat.md, "Export and import") and sends each conversation's messages. At most ${IMPORT_LIMITS.messages} messages of ${IMPORT_LIMITS.contentChars} characters, and ${IMPORT_LIMITS.bodyBytes / 1024 / 1024} MiB a request. Tool, system and empty messages are for the client to leave out. A caller who keeps PARLEY_IMPORTS_MAX_PER_USER imported conversations, or whose imported conversations would pass PARLEY_IMPORT_QUOTA_BYTES with this one (each message counts its content's UTF-8 bytes plus ${MESSAGE_ROW_BYTES}): 409 with \`data: {reason: "cap", cap, max}\`, nothing imported; deleting imported conversations makes room.`,
    input: t.Object({
      title: t.String({ maxLength: 200 }),
      messages: t.Array(ImportedMessage, { minItems: 1, maxItems: IMPORT_LIMITS.messages }),
    }),
    output: t.Object({ conversation: ConversationSchema, itemCount: t.Integer() }),
    errors: [409],
    rateLimit: 'write',
    maxBodyBytes: IMPORT_LIMITS.bodyBytes,
    handler: async ({ input, user, deps }) => {
      const conversation = await deps.store.write((tx) =>
        importConversation(
          tx,
          {
            ownerId: user.id,
            title: input.title.trim().slice(0, 200),
            messages: input.messages.map((m) => ({ role: m.role, content: m.content, at: m.createdAt ? Date.parse(m.createdAt) : undefined })),
          },
          deps.now(),
          { maxConversations: deps.config.importsMaxPerUser, quotaBytes: deps.config.importQuotaBytes },
        ),
      );
      return { conversation: conversationView(conversation), itemCount: input.messages.length };
    },
  }),
  defineOperation({
    path: 'chat/branchConversation',
    summary: 'Fork a conversation at an item into a new conversation',
    description:
      'Copies the items up to and including `fromItemId` into a new conversation owned by the caller, which goes on with the source\'s assistant (`assistantId`) when the caller may use it, else with Parley itself. Owner or writer (403); unknown conversation or item → 404; a caller who owns PARLEY_BRANCHES_MAX_PER_USER branches: 409.',
    input: t.Object({ conversationId: t.String(), fromItemId: t.String() }),
    output: t.Object({ conversation: ConversationSchema }),
    errors: [403, 404, 409],
    rateLimit: 'write',
    handler: ({ input, user, deps }) =>
      deps.store.write(function* (tx) {
        const source = yield* writableConversation(tx, user, input.conversationId);
        const item = yield* findItemById(tx, input.fromItemId);
        if (!item || item.conversationId !== source.id) throw notFound();
        yield* checkCap(tx, 'branchesMaxPerUser', user.id, deps.config.branchesMaxPerUser, countBranchesOf(tx, user.id), (n) => [
          `You own ${n} branched conversations`,
          'Delete some you no longer need first (chat/deleteConversation).',
        ]);
        const branch = yield* branchConversation(tx, source, item, user.id, deps.now(), yield* assistantForBranch(tx, source, user));
        return { conversation: conversationView(branch, yield* findBranchOf(tx, branch.id)) };
      }),
  }),
  defineOperation({
    path: 'chat/truncateConversationFromItem',
    summary: 'Delete an item and every later item (edit and continue)',
    description:
      'Running AI turns of the conversation are cancelled first (their streams end with the cancellation error). Answers `{success: true, deletedCount}`. When nothing can be deleted it answers 200 with `success: false`, `deletedCount: 0` and a `reason`: ' +
      '`CONVERSATION_NOT_WRITABLE` (unknown conversation, or the caller is neither owner nor writer), `GROUP_CONVERSATION` (a group chat\'s conversation: its history is shared and streamed to every member, so it is not truncated) or `ITEM_NOT_FOUND` (the item is not in that conversation; `failedItemId` names it).',
    input: t.Object({ conversationId: t.String(), fromItemId: t.String() }),
    output: t.Object({ success: t.Boolean(), deletedCount: t.Number(), reason: t.Optional(t.String()), failedItemId: t.Optional(t.String()) }),
    handler: async ({ input, user, deps }) => {
      const { conversationId, fromItemId } = input;
      const notFound = { success: false, deletedCount: 0, reason: TRUNCATE_REASONS.itemNotFound, failedItemId: fromItemId };
      const refusal = await deps.store.read(function* (tx) {
        if (!(yield* canWriteConversation(tx, conversationId, user.id))) return { success: false, deletedCount: 0, reason: TRUNCATE_REASONS.notWritable };
        // A group's history is shared by its members and streamed to them: it is not edited from here.
        if (yield* findGroupByConversationId(tx, conversationId)) return { success: false, deletedCount: 0, reason: TRUNCATE_REASONS.groupConversation };
        if ((yield* findItemById(tx, fromItemId))?.conversationId !== conversationId) return notFound;
        return undefined;
      });
      if (refusal) return refusal;
      // A turn still answering the history being cut would append its answer after the cut:
      // editing a message and sending it again cancels the answer to the old one.
      let deletedCount: number | undefined | 'running' = 'running';
      for (let pass = 0; deletedCount === 'running'; pass++) {
        await stopResponses(deps, input.conversationId);
        // The conversation's row first: a turn starting meanwhile takes it to append its question
        // (on PostgreSQL, between the wait and this write), so it is either seen running here, and
        // stopped before the cut, or appends after the cut; never a question cut under its answer.
        // Bounded, as the wait is. Then the item is read again: another truncate may have taken it.
        deletedCount = await deps.store.write(function* (tx) {
          yield* updateConversation(tx, conversationId, {}, deps.now());
          if (pass < 9 && (yield* listRunningInConversation(tx, conversationId)).length) return 'running' as const;
          const item = yield* findItemById(tx, fromItemId);
          if (item?.conversationId !== conversationId) return undefined;
          return yield* truncateFromItem(tx, item, deps.now());
        });
      }
      return deletedCount === undefined ? notFound : { success: true, deletedCount };
    },
  }),
  defineOperation({
    path: 'chat/deleteConversation',
    summary: 'Delete a conversation and everything attached to it',
    description: 'Owner only (403); unknown → 404. Running AI turns are cancelled first; items, writers, branches, responses, their events, widgets and bookmark items go in the same transaction.',
    input: ConversationId,
    output: Success,
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const c = await deps.store.read((tx) => findConversationById(tx, input.conversationId));
      if (!c) throw notFound();
      if (c.ownerId !== user.id) throw forbidden();
      await stopResponses(deps, c.id);
      // A group's conversation goes with its group, so members' open streams get `group.deleted`.
      const group = await deps.store.read((tx) => findGroupByConversationId(tx, c.id));
      if (group) {
        await deleteGroup(deps, group);
        return { success: true };
      }
      const removed = await deps.store.write((tx) => deleteConversation(tx, c.id));
      if (!removed) throw notFound();
      return { success: true };
    },
  }),
  defineOperation({
    path: 'chat/canWriteConversation',
    summary: 'Whether the caller may write to a conversation',
    description: 'True for the owner and writers; false for anyone else and for an unknown conversation.',
    input: ConversationId,
    output: t.Object({ canWrite: t.Boolean() }),
    errors: [500],
    handler: async ({ input, user, deps }) => ({ canWrite: await deps.store.read((tx) => canWriteConversation(tx, input.conversationId, user.id)) }),
  }),
  defineOperation({
    path: 'chat/setConversationStudyMode',
    summary: 'Turn study mode on or off (deprecated)',
    description:
      'Deprecated (answers carry a `Deprecation` header). Study mode makes the assistant a tutor (a different system prompt). `success: false` for an unknown conversation or one the caller cannot write to.',
    input: t.Object({ conversationId: t.String(), studyMode: t.Boolean() }),
    output: Success,
    deprecated: true,
    handler: ({ input, user, deps }) =>
      deps.store.write(function* (tx) {
        if (!(yield* canWriteConversation(tx, input.conversationId, user.id))) return { success: false };
        yield* updateConversation(tx, input.conversationId, { studyMode: input.studyMode }, deps.now());
        return { success: true };
      }),
  }),
];

