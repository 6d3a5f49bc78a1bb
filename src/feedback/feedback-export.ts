import type { FeedbackReason } from '../db/schema';
import type { Store } from '../db/work';
import { iso } from '../ids';
import { readExportPage, readExportResponses, type ExportResponse, type ExportRow } from './feedback-export.store';

/** One exported rating (docs/feedback.md, "Export"); the CSV has these columns, in this order. */
export interface ExportRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  kind: 'chat' | 'research' | 'group';
  rating: 'up' | 'down';
  reasons: FeedbackReason[];
  comment: string | null;
  question: string | null;
  answer: string;
  model: string | null;
  userId: string;
  userEmail: string;
  conversationId: string;
  itemId: string;
  groupChatId: string | null;
}

export const EXPORT_COLUMNS = [
  'id',
  'createdAt',
  'updatedAt',
  'kind',
  'rating',
  'reasons',
  'comment',
  'question',
  'answer',
  'model',
  'userId',
  'userEmail',
  'conversationId',
  'itemId',
  'groupChatId',
] as const satisfies readonly (keyof ExportRecord)[];

/** Rows a page holds: research reports run to tens of kilobytes, so a page stays a few megabytes. */
export const EXPORT_PAGE_ROWS = 200;

/**
 * Every rating (changed at or after `since`), a page at a time, oldest change first. A rating
 * changed while the export runs moves behind the cursor and may come out twice, newest last.
 */
export async function* readFeedbackExport(store: Store, opts: { since?: number; handle: string; pageRows?: number }): AsyncGenerator<ExportRecord[]> {
  const limit = opts.pageRows ?? EXPORT_PAGE_ROWS;
  let after: { updatedAt: number; id: string } | undefined;
  for (;;) {
    const { rows, responses } = await store.read(function* (tx) {
      const rows = yield* readExportPage(tx, { since: opts.since, after, limit, handle: opts.handle });
      const ids = [...new Set(rows.flatMap((r) => (r.responseId && !r.groupChatId ? [r.responseId] : [])))];
      return { rows, responses: yield* readExportResponses(tx, ids) };
    });
    if (rows.length) yield rows.map((r) => recordOf(r, r.responseId ? responses.get(r.responseId) : undefined));
    if (rows.length < limit) return;
    const last = rows[rows.length - 1]!;
    after = { updatedAt: last.updatedAt, id: last.id };
  }
}

/**
 * A group's answer replies to the last message that addressed the assistant (the earlier one
 * when none did: the handle changed since); a chat or research answer to what its turn was asked.
 * Group answers record no model.
 */
function recordOf(r: ExportRow, response: ExportResponse | undefined): ExportRecord {
  const group = r.groupChatId !== null;
  return {
    id: r.id,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
    kind: group ? 'group' : (response?.kind ?? 'chat'),
    rating: r.rating,
    reasons: r.reasons,
    comment: r.comment,
    question: group ? (r.mentioning ?? r.previous) : (response?.input.message ?? r.previous),
    answer: r.answer,
    model: group ? null : response?.model || null,
    userId: r.userId,
    userEmail: r.userEmail,
    conversationId: r.conversationId,
    itemId: r.itemId,
    groupChatId: r.groupChatId,
  };
}

export const jsonlLine = (r: ExportRecord) => `${JSON.stringify(r)}\n`;

/**
 * RFC 4180: a field holding a comma, a double quote, CR or LF is quoted, its quotes doubled;
 * records end with CRLF. Values are written as they are (no formula escaping): docs/feedback.md.
 */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

const csvRow = (fields: string[]) => `${fields.map(csvField).join(',')}\r\n`;

export const csvHeader = () => csvRow([...EXPORT_COLUMNS]);

/** Null is the empty field; reasons are joined with `;`. */
export const csvLine = (r: ExportRecord) => csvRow(EXPORT_COLUMNS.map((c) => (c === 'reasons' ? r.reasons.join(';') : (r[c] ?? ''))));
