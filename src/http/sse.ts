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

/**
 * Interleave `beat()` values into `source` whenever it has been quiet for `everyMs`.
 * Returning this generator (client gone) returns the source too.
 */
export async function* withHeartbeats<T, B>(source: AsyncIterator<T>, everyMs: number, beat: () => B): AsyncGenerator<T | B> {
  let pending = source.next();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    while (true) {
      const tick = new Promise<'tick'>((resolve) => (timer = setTimeout(() => resolve('tick'), everyMs)));
      const res = await Promise.race([pending, tick]);
      clearTimeout(timer);
      if (res === 'tick') {
        yield beat();
        continue;
      }
      if (res.done) return;
      yield res.value;
      pending = source.next();
    }
  } finally {
    clearTimeout(timer);
    await source.return?.();
  }
}
