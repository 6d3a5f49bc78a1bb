import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError, forbidden, invalidInput, notFound } from '../http/errors';
import type { SupportThread } from '../db/schema';
import type { Tx, Work } from '../db/work';
import { countUnreadSupportMessages, findSupportThread, listSupportMessages, listSupportThreadsOfUser, markSupportMessagesRead } from './support.store';
import { SupportRefusal, closeUserThread, lockUserSupport, postUserMessage, startSupportThread, supportLimitsOf } from './support.rules';
import {
  SupportMessageSchema,
  SupportThreadSchema,
  decodeSupportCursor,
  encodeSupportCursor,
  supportMessageView,
  supportThreadView,
} from './support.view';

// A user's support conversations with the server's admins, who answer from the CLI
// (cli/support.ts). docs/support.md.

const THREAD_PAGE = { minimum: 1, maximum: 100, default: 50 };
const MESSAGE_PAGE = { minimum: 1, maximum: 200, default: 100 };
/** The schema's ceiling; the configured `PARLEY_SUPPORT_MESSAGE_MAX_CHARS` (at most this) is checked in the rules. */
const MESSAGE_CHARS = 20_000;
const Message = t.String({ minLength: 1, maxLength: MESSAGE_CHARS, pattern: '\\S' });
const ThreadRef = t.Object({ threadId: t.String({ minLength: 1, maxLength: 100 }) });
const Posted = t.Object({ thread: SupportThreadSchema, message: SupportMessageSchema });

/** The caller's thread: unknown → 404, someone else's → 403. */
function* ownThread(tx: Tx, threadId: string, userId: string): Work<SupportThread> {
  const thread = yield* findSupportThread(tx, threadId);
  if (!thread) throw notFound();
  if (thread.userId !== userId) throw forbidden();
  return thread;
}

/** The rules refuse in words; the API answers 400 (with the field) or 409 with those words. */
async function refused<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof SupportRefusal)) throw err;
    if (err.kind === 'invalid') throw invalidInput([{ path: [err.field], message: err.message }]);
    throw new AppError('CONFLICT', { message: err.message, data: err.data });
  }
}

function cursorOf(cursor: string | undefined) {
  // No cursor, or an empty one, is the first page; one this API did not give out is refused.
  const position = cursor ? decodeSupportCursor(cursor) : undefined;
  if (cursor && !position) throw invalidInput([{ path: ['cursor'], message: 'Not a cursor this operation gave out' }]);
  return position;
}

export const supportOperations = [
  defineOperation({
    path: 'support/createThread',
    summary: "Open a support conversation with the server's admins",
    description:
      'A new open thread with its first message. The message is trimmed and at most `PARLEY_SUPPORT_MESSAGE_MAX_CHARS` characters (else 400); ' +
      'a user has at most `PARLEY_SUPPORT_MAX_OPEN_THREADS` open threads (one more: 409).',
    input: t.Object({ subject: t.String({ minLength: 1, maxLength: 200, pattern: '\\S' }), message: Message }),
    output: Posted,
    errors: [409, 429],
    rateLimit: 'write',
    // 20,000 characters are up to 120 KB when a client escapes each as `\uXXXX`.
    maxBodyBytes: 128 * 1024,
    handler: async ({ input, user, deps }) => {
      const posted = await refused(() => deps.store.write((tx) => startSupportThread(tx, user.id, input, supportLimitsOf(deps.config), deps.now())));
      return { thread: supportThreadView(posted.thread, 0), message: supportMessageView(posted.message) };
    },
  }),
  defineOperation({
    path: 'support/listThreads',
    summary: "The caller's support threads, newest activity first, with unread counts",
    description: '`unreadCount`: admin replies the caller has not read yet. `status` keeps open or closed threads only (default `all`). Pages with `cursor`/`nextCursor`.',
    input: t.Object({
      status: t.Optional(t.Union([t.Literal('open'), t.Literal('closed'), t.Literal('all')])),
      cursor: t.Optional(t.String({ maxLength: 200 })),
      limit: t.Optional(t.Integer(THREAD_PAGE)),
    }),
    output: t.Object({ threads: t.Array(SupportThreadSchema), nextCursor: t.Union([t.String(), t.Null()]) }),
    handler: async ({ input, user, deps }) => {
      const limit = input.limit ?? THREAD_PAGE.default;
      const after = cursorOf(input.cursor);
      const status = input.status === 'all' ? undefined : input.status;
      const { rows, unread } = await deps.store.read(function* (tx) {
        const rows = yield* listSupportThreadsOfUser(tx, user.id, { limit: limit + 1, after, status });
        return { rows, unread: yield* countUnreadSupportMessages(tx, rows.slice(0, limit).map((r) => r.id), 'user') };
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        threads: page.map((th) => supportThreadView(th, unread.get(th.id) ?? 0)),
        nextCursor: rows.length > limit && last ? encodeSupportCursor({ at: last.lastMessageAt, id: last.id }) : null,
      };
    },
  }),
  defineOperation({
    path: 'support/getThread',
    summary: "One of the caller's support threads and its messages, oldest first; marks the admins' replies read",
    description:
      'The newest `limit` messages (default 100), oldest first; `nextCursor` fetches the ones before them (null: none). Every admin reply in the thread is marked read. ' +
      'Unknown thread: 404; another user\'s: 403.',
    input: t.Object({ ...ThreadRef.properties, cursor: t.Optional(t.String({ maxLength: 200 })), limit: t.Optional(t.Integer(MESSAGE_PAGE)) }),
    output: t.Object({ thread: SupportThreadSchema, messages: t.Array(SupportMessageSchema), nextCursor: t.Union([t.String(), t.Null()]) }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const limit = input.limit ?? MESSAGE_PAGE.default;
      const olderThan = cursorOf(input.cursor);
      const now = deps.now();
      const { thread, rows } = await deps.store.write(function* (tx) {
        const thread = yield* ownThread(tx, input.threadId, user.id);
        yield* markSupportMessagesRead(tx, thread.id, 'user', now);
        return { thread, rows: yield* listSupportMessages(tx, thread.id, { limit: limit + 1, olderThan }) };
      });
      const messages = rows.length > limit ? rows.slice(1) : rows;
      const first = messages[0];
      return {
        thread: supportThreadView(thread, 0),
        messages: messages.map(supportMessageView),
        nextCursor: rows.length > limit && first ? encodeSupportCursor({ at: first.createdAt, id: first.id }) : null,
      };
    },
  }),
  defineOperation({
    path: 'support/sendMessage',
    summary: 'Write in one of the caller\'s support threads',
    description:
      'A closed thread opens again (within `PARLEY_SUPPORT_MAX_OPEN_THREADS`, else 409). The message is trimmed and at most `PARLEY_SUPPORT_MESSAGE_MAX_CHARS` characters (else 400). ' +
      'Unknown thread: 404; another user\'s: 403.',
    input: t.Object({ ...ThreadRef.properties, message: Message }),
    output: Posted,
    errors: [403, 404, 409, 429],
    rateLimit: 'write',
    maxBodyBytes: 128 * 1024,
    handler: async ({ input, user, deps }) => {
      const limits = supportLimitsOf(deps.config);
      const { thread, message, unread } = await refused(() =>
        deps.store.write(function* (tx) {
          yield* lockUserSupport(tx, user.id);
          const posted = yield* postUserMessage(tx, yield* ownThread(tx, input.threadId, user.id), input.message, limits, deps.now());
          return { ...posted, unread: yield* countUnreadSupportMessages(tx, [posted.thread.id], 'user') };
        }),
      );
      return { thread: supportThreadView(thread, unread.get(thread.id) ?? 0), message: supportMessageView(message) };
    },
  }),
  defineOperation({
    path: 'support/closeThread',
    summary: 'Close one of the caller\'s support threads',
    description: 'Closing a closed thread changes nothing. Writing in it later opens it again. Unknown thread: 404; another user\'s: 403.',
    input: ThreadRef,
    output: t.Object({ thread: SupportThreadSchema }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const { thread, unread } = await deps.store.write(function* (tx) {
        yield* lockUserSupport(tx, user.id);
        const thread = yield* closeUserThread(tx, yield* ownThread(tx, input.threadId, user.id), deps.now());
        return { thread, unread: yield* countUnreadSupportMessages(tx, [thread.id], 'user') };
      });
      return { thread: supportThreadView(thread, unread.get(thread.id) ?? 0) };
    },
  }),
];
