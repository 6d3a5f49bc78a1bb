import { sse } from 'elysia';

/**
 * Server-sent-event framing on top of Elysia's generator streaming.
 *
 * - Data frames go through Elysia's `sse()` so they carry `id`, `event` and `retry`.
 * - Comment lines (heartbeats) are objects with `toSSE()`: Elysia enqueues those verbatim,
 *   whereas a plain string would be wrapped as `data:`.
 * - Elysia awaits a generator's first value before it sends the response head, so a stream
 *   whose first event may take a while should yield `sseComment('open')` first.
 * - When the client goes away Elysia calls the generator's `return()`, so `finally` blocks run:
 *   put unsubscription and cleanup there.
 */

export interface SseFrame {
  id?: string;
  retry?: number;
  data: unknown;
}

/** An `event: message` frame, the only event name the interface uses. */
export const sseMessage = (frame: SseFrame) =>
  sse({ event: 'message', data: frame.data as never, ...(frame.id ? { id: frame.id } : {}), ...(frame.retry ? { retry: frame.retry } : {}) });

/** A comment line: ignored by EventSource parsers, but it keeps proxies and idle timers from closing the socket. */
export const sseComment = (text: string) => ({ toSSE: () => `: ${text.replace(/\n/g, ' ')}\n\n` });

/** The id a reconnecting client last saw (`Last-Event-ID` header), if any. */
export function readLastEventId(request: Request): string | undefined {
  const v = request.headers.get('last-event-id')?.trim();
  return v ? v : undefined;
}
