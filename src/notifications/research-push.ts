import type { Config } from '../config';
import type { Store } from '../db/work';
import type { Logger } from '../log';
import type { PushClient } from './expo-client';
import type { Notifier, ResearchStatus, ResearchStatusPush } from './notifier';
import { checkReceipts, sendPushToUser, type PushContent, type PushDeps, type PushReport } from './push.service';

export const RESEARCH_STATUSES: readonly ResearchStatus[] = ['queued', 'in_progress', 'completed', 'failed', 'cancelled'];

const TITLES: Record<ResearchStatus, string> = {
  queued: 'Deep research queued',
  in_progress: 'Deep research started',
  completed: 'Deep research ready',
  failed: 'Deep research failed',
  cancelled: 'Deep research cancelled',
};

/**
 * The deep-research status push (docs/extras.md shows it). `data` is what the app reads to open
 * the conversation; `title`/`body` are what the device shows.
 */
export function researchStatusContent(p: ResearchStatusPush, test = false): PushContent {
  return {
    title: TITLES[p.status],
    body: p.title?.trim() || (p.status === 'completed' ? 'Your research report is ready to read.' : 'Open Parley for details.'),
    sound: 'default',
    priority: 'high',
    data: {
      type: 'deep_research.status',
      conversationId: p.conversationId,
      responseId: p.responseId ?? null,
      status: p.status,
      test,
    },
  };
}

/** Send a synthetic status push to all of the user's tokens, wait, then read the receipts. */
export async function sendTestResearchPush(
  deps: PushDeps & { receiptDelayMs: number },
  p: ResearchStatusPush,
): Promise<PushReport> {
  const sent = await sendPushToUser(deps, p.userId, researchStatusContent(p, true));
  if (sent.receipts.size && deps.receiptDelayMs) await Bun.sleep(deps.receiptDelayMs);
  return checkReceipts(deps, sent);
}

/**
 * The Notifier chat calls when a deep research changes state. Sends now; reads the receipts
 * later in the background (they exist only once Expo has talked to Apple/Google), so the caller
 * never waits for them.
 */
export function createExpoNotifier(deps: { store: Store; log: Logger; push: PushClient; config: Pick<Config, 'pushReceiptDelayMs'> }): Notifier {
  const pushDeps: PushDeps = { store: deps.store, log: deps.log, push: deps.push };
  return {
    async researchStatus(p) {
      try {
        const sent = await sendPushToUser(pushDeps, p.userId, researchStatusContent(p));
        if (!sent.receipts.size) return;
        const timer = setTimeout(() => {
          checkReceipts(pushDeps, sent).catch((err) => deps.log.warn('push receipt check failed', { cause: String(err) }));
        }, deps.config.pushReceiptDelayMs);
        timer.unref?.();
      } catch (err) {
        deps.log.warn('research push failed', { cause: String((err as Error)?.message ?? err) });
      }
    },
  };
}
