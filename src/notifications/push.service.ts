import type { ExpoPushMessage, ExpoPushReceipt } from 'expo-server-sdk';
import type { Store } from '../db/work';
import type { Logger } from '../log';
import type { PushClient } from './expo-client';
import { removePushTokens } from './push-token.store';
import { deliverableTokens } from './push-token-holder';

/** The answer of `notifications/sendTestWebhookNotification` (and `parley notify test`). */
export interface PushReport {
  /** At least one push was accepted and nothing failed (invalid tokens do not count as failures). */
  ok: boolean;
  /** Tokens the user had when the push started (registered by a credential that is still live). */
  tokenCount: number;
  /** Pushes Expo accepted (an `ok` ticket). */
  sent: number;
  /** Tokens Expo reported as `DeviceNotRegistered` (in a ticket or a receipt); they are removed. */
  invalidTokens: number;
  /** Other failures: error tickets, failed requests, error receipts. */
  errors: number;
  /** Receipt ids Parley asked Expo about. */
  receiptIdsRequested: number;
  /** Receipt ids Expo had no receipt for (yet). */
  receiptsMissing: number;
}

export interface PushDeps {
  store: Store;
  log: Logger;
  push: PushClient | undefined;
}

export type PushContent = Omit<ExpoPushMessage, 'to'>;

/** Tickets sent: what the receipt check needs. */
export interface SentPushes {
  report: PushReport;
  /** receipt id → the token it was sent to. */
  receipts: Map<string, string>;
}

const isGone = (r: { status: string; details?: { error?: string } }) => r.status === 'error' && r.details?.error === 'DeviceNotRegistered';

/** Send one push to every token of a user, in the SDK's chunks. Never throws for delivery failures. */
export async function sendPushToUser(deps: PushDeps, userId: string, content: PushContent): Promise<SentPushes> {
  const tokens = await deps.store.read((tx) => deliverableTokens(tx, userId, Date.now()));
  const report: PushReport = { ok: false, tokenCount: tokens.length, sent: 0, invalidTokens: 0, errors: 0, receiptIdsRequested: 0, receiptsMissing: 0 };
  const receipts = new Map<string, string>();
  if (!deps.push || !tokens.length) return { report, receipts };
  const push = deps.push;
  const gone: string[] = [];
  const chunks = push.chunkPushNotifications(tokens.map((to) => ({ ...content, to })));
  // The SDK caps concurrent requests (6) and retries a 429 with exponential back-off.
  await Promise.all(
    chunks.map(async (chunk) => {
      try {
        const tickets = await push.sendPushNotificationsAsync(chunk);
        tickets.forEach((ticket, i) => {
          const to = chunk[i]!.to as string;
          if (ticket.status === 'ok') {
            report.sent++;
            receipts.set(ticket.id, to);
          } else if (isGone(ticket)) gone.push(to);
          else {
            report.errors++;
            deps.log.warn('push ticket error', { error: ticket.details?.error, message: ticket.message });
          }
        });
      } catch (err) {
        report.errors += chunk.length;
        deps.log.warn('push request failed', { cause: String((err as Error)?.message ?? err), code: (err as { code?: string }).code });
      }
    }),
  );
  await deps.store.read((tx) => removePushTokens(tx, gone));
  report.invalidTokens += gone.length;
  report.ok = report.sent > 0 && report.errors === 0;
  return { report, receipts };
}

/** Ask Expo for the receipts of sent pushes; update the report and drop unregistered tokens. */
export async function checkReceipts(deps: PushDeps, sent: SentPushes): Promise<PushReport> {
  const { report, receipts } = sent;
  if (!deps.push || !receipts.size) return report;
  const push = deps.push;
  const gone: string[] = [];
  for (const ids of push.chunkPushNotificationReceiptIds([...receipts.keys()])) {
    report.receiptIdsRequested += ids.length;
    let answer: Record<string, ExpoPushReceipt>;
    try {
      answer = await push.getPushNotificationReceiptsAsync(ids);
    } catch (err) {
      report.errors++;
      report.receiptsMissing += ids.length;
      deps.log.warn('push receipts request failed', { cause: String((err as Error)?.message ?? err) });
      continue;
    }
    for (const id of ids) {
      const receipt = answer[id];
      if (!receipt) report.receiptsMissing++;
      else if (isGone(receipt)) gone.push(receipts.get(id)!);
      else if (receipt.status === 'error') {
        report.errors++;
        deps.log.warn('push receipt error', { error: receipt.details?.error, message: receipt.message });
      }
    }
  }
  await deps.store.read((tx) => removePushTokens(tx, gone));
  report.invalidTokens += gone.length;
  report.ok = report.sent > 0 && report.errors === 0;
  return report;
}
