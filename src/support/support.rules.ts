import type { Config } from '../config';
import type { SupportMessage, SupportThread } from '../db/schema';
import { serializeOn, type Tx, type Work } from '../db/work';
import { capData } from '../http/user-caps';
import {
  countOpenSupportThreads,
  findSupportThread,
  findSupportThreadWithUser,
  insertSupportMessage,
  insertSupportThread,
  listSupportMessages,
  markSupportMessagesRead,
  setSupportThreadStatus,
  type SupportThreadWithUser,
} from './support.store';

/**
 * The rules of support conversations, shared by the API (support.routes.ts) and the admins' CLI
 * (cli/support.ts). Each is a unit of work to run with `store.write`. docs/support.md.
 */

/** Why a write was refused; the API answers it with a status, the CLI prints the message. */
export class SupportRefusal extends Error {
  constructor(
    readonly kind: 'invalid' | 'conflict',
    message: string,
    /** The input field at fault, for a 400's `issues`. */
    readonly field = 'message',
    /** A 409's `data` (the cap reached, src/http/user-caps.ts). */
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export interface SupportLimits {
  maxOpenThreads: number;
  maxMessageChars: number;
}

export const supportLimitsOf = (config: Pick<Config, 'supportMaxOpenThreads' | 'supportMessageMaxChars'>): SupportLimits => ({
  maxOpenThreads: config.supportMaxOpenThreads,
  maxMessageChars: config.supportMessageMaxChars,
});

export interface PostedMessage {
  thread: SupportThread;
  message: SupportMessage;
}

/** A message's text as stored: trimmed, not blank, at most the configured length. */
export function checkMessageBody(raw: string, limits: SupportLimits, field = 'message'): string {
  const body = raw.trim();
  if (!body) throw new SupportRefusal('invalid', 'The message is empty', field);
  if (body.length > limits.maxMessageChars) throw new SupportRefusal('invalid', `The message is longer than ${limits.maxMessageChars} characters`, field);
  return body;
}

/**
 * Queue behind the other writes to this user's support threads (PostgreSQL; SQLite's one writer
 * does it already), so two requests at once cannot both pass the open-thread cap, and a reply
 * racing a close is applied before or after it, never half-way.
 */
export function* lockUserSupport(tx: Tx, userId: string): Work<void> {
  yield* serializeOn(tx, `support:${userId}`);
}

function* ensureRoomForOpenThread(tx: Tx, userId: string, limits: SupportLimits): Work<void> {
  if ((yield* countOpenSupportThreads(tx, userId)) >= limits.maxOpenThreads)
    throw new SupportRefusal(
      'conflict',
      `You already have ${limits.maxOpenThreads} open support conversations, the most this server allows (PARLEY_SUPPORT_MAX_OPEN_THREADS): close one first`,
      undefined,
      capData('supportMaxOpenThreads', limits.maxOpenThreads),
    );
}

/** A new open thread and its first message. */
export function* startSupportThread(tx: Tx, userId: string, input: { subject: string; message: string }, limits: SupportLimits, now: number): Work<PostedMessage> {
  const body = checkMessageBody(input.message, limits);
  yield* lockUserSupport(tx, userId);
  yield* ensureRoomForOpenThread(tx, userId, limits);
  const thread = yield* insertSupportThread(tx, userId, input.subject.trim(), now);
  const message = yield* insertSupportMessage(tx, thread.id, { author: 'user', body }, now);
  return { thread: (yield* findSupportThread(tx, thread.id))!, message };
}

/**
 * The user writes in one of their threads (the caller has checked it is theirs, after
 * `lockUserSupport`). A closed thread opens again, within the open-thread cap.
 */
export function* postUserMessage(tx: Tx, thread: SupportThread, raw: string, limits: SupportLimits, now: number): Work<PostedMessage> {
  const body = checkMessageBody(raw, limits);
  if (thread.status === 'closed') {
    yield* ensureRoomForOpenThread(tx, thread.userId, limits);
    yield* setSupportThreadStatus(tx, thread.id, 'open', now);
  }
  const message = yield* insertSupportMessage(tx, thread.id, { author: 'user', body }, now);
  return { thread: (yield* findSupportThread(tx, thread.id))!, message };
}

/** The user closes their thread; closing a closed one changes nothing. */
export function* closeUserThread(tx: Tx, thread: SupportThread, now: number): Work<SupportThread> {
  return thread.status === 'closed' ? thread : yield* setSupportThreadStatus(tx, thread.id, 'closed', now);
}

/**
 * An admin answers. The thread opens again if it was closed (an admin is not held to the user's
 * cap), unless `close` is asked: then it ends closed, with the answer as its last word.
 * Undefined when there is no such thread.
 */
export function* replyAsAdmin(
  tx: Tx,
  threadId: string,
  input: { message: string; adminName?: string; adminEmail?: string; close?: boolean },
  limits: SupportLimits,
  now: number,
): Work<{ thread: SupportThreadWithUser; message: SupportMessage } | undefined> {
  const body = checkMessageBody(input.message, limits);
  const found = yield* findSupportThread(tx, threadId);
  if (!found) return undefined;
  yield* lockUserSupport(tx, found.userId);
  const thread = (yield* findSupportThread(tx, threadId))!;
  const message = yield* insertSupportMessage(tx, thread.id, { author: 'admin', body, adminName: input.adminName, adminEmail: input.adminEmail }, now);
  const status = input.close ? 'closed' : 'open';
  if (thread.status !== status) yield* setSupportThreadStatus(tx, thread.id, status, now);
  return { thread: (yield* findSupportThreadWithUser(tx, thread.id))!, message };
}

/** A thread as the admins read it: every message, the user's now marked read by admins. */
export function* readThreadAsAdmin(tx: Tx, threadId: string, now: number): Work<{ thread: SupportThreadWithUser; messages: SupportMessage[] } | undefined> {
  const thread = yield* findSupportThreadWithUser(tx, threadId);
  if (!thread) return undefined;
  yield* markSupportMessagesRead(tx, threadId, 'admin', now);
  return { thread, messages: yield* listSupportMessages(tx, threadId) };
}
