import type { SupportMessage, SupportThread } from '../db/schema';
import type { Logger } from '../log';
import type { PushClient } from '../notifications/expo-client';
import { sendPushToUser, type PushContent, type PushDeps, type PushReport } from '../notifications/push.service';

/**
 * The push a user gets when an admin answers (docs/support.md shows it). `data` is what the app
 * reads to open the thread. The device shows the thread's subject, not the answer: a lock screen
 * is no place for what an admin may say about the user's account.
 */
export function supportReplyContent(thread: SupportThread, message: SupportMessage): PushContent {
  return {
    title: 'New reply from support',
    body: thread.subject,
    sound: 'default',
    data: { type: 'support.reply', threadId: thread.id, messageId: message.id },
  };
}

/** What became of the reply's push: the reply stands whatever this says. */
export interface SupportPushOutcome {
  /** `disabled`: push is off; `no_devices`: the user has no live device (or Expo says all are unregistered); `sent`: Expo took at least one; `failed`: none went out. */
  status: 'disabled' | 'no_devices' | 'sent' | 'failed';
  report: PushReport | null;
  /** What went wrong (Expo's refusals, an unreachable service), when something did. */
  error: string | null;
}

/**
 * Push the reply to the user's devices. Never throws: a push that cannot go out (Expo down, the
 * client not buildable) is reported, and the answer stays stored for the app to fetch.
 */
export async function pushSupportReply(
  deps: Omit<PushDeps, 'push'> & { push: PushClient | undefined | (() => Promise<PushClient>) },
  thread: SupportThread,
  message: SupportMessage,
): Promise<SupportPushOutcome> {
  if (!deps.push) return { status: 'disabled', report: null, error: null };
  const { log, problems } = noting(deps.log);
  try {
    const push = typeof deps.push === 'function' ? await deps.push() : deps.push;
    const { report } = await sendPushToUser({ store: deps.store, log, push }, thread.userId, supportReplyContent(thread, message));
    // Devices Expo says are gone (their tokens now removed) are no devices, not a failure.
    const status = report.sent > 0 ? 'sent' : report.errors === 0 && report.invalidTokens === report.tokenCount ? 'no_devices' : 'failed';
    return { status, report, error: problems.length ? problems.join('; ') : null };
  } catch (err) {
    return { status: 'failed', report: null, error: String((err as Error)?.message ?? err) };
  }
}

/** The push service's warnings, logged as before and kept in words for the outcome. */
function noting(inner: Logger): { log: Logger; problems: string[] } {
  const problems: string[] = [];
  const log: Logger = {
    ...inner,
    warn(msg, fields) {
      const why = fields?.cause ?? fields?.message ?? fields?.error;
      problems.push(why === undefined ? msg : `${msg}: ${String(why)}`);
      inner.warn(msg, fields);
    },
  };
  return { log, problems };
}
