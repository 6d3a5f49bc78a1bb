/**
 * Server-sent-event framing. Every stream writes frames as text built here, once per event for
 * all its subscribers (chat and research streams as strings through Elysia's generator streaming,
 * group streams as bytes written to their own direct stream, src/http/push-stream.ts).
 *
 * - A value with `toSSE()` is written verbatim by Elysia (`rawChunk`); a plain string would be
 *   wrapped as `data:`. `sse: true` makes the first one set `text/event-stream`.
 * - Elysia awaits a generator's first value before it sends the response head, so a stream
 *   whose first event may take a while should yield `sseComment('open')` first.
 * - When the client goes away Elysia calls the generator's `return()`, so `finally` blocks run:
 *   put unsubscription and cleanup there (src/http/stream-guard.ts makes that prompt).
 */

/** An `event: message` frame (the only event name the interface uses) around JSON already serialised. */
export function messageFrame(json: string, id?: string | null, retryMs?: number): string {
  const idLine = id == null ? '' : `id: ${id}\n`;
  const retryLine = retryMs === undefined ? '' : `retry: ${retryMs}\n`;
  return `event: message\n${idLine}${retryLine}data: ${json}\n\n`;
}

/** Text Elysia writes to the stream as it is: one frame, several, or comment lines. */
export const rawChunk = (text: string) => ({ sse: true as const, toSSE: () => text });

/** Encoded frames as one chunk, for one socket write (no copy for a single frame). */
export const joinFrames = (frames: readonly Uint8Array[]): Uint8Array => (frames.length === 1 ? frames[0]! : Buffer.concat(frames));

/** A comment line: ignored by EventSource parsers, but it keeps proxies and idle timers from closing the socket. */
export const sseComment = (text: string) => rawChunk(`: ${text.replace(/\n/g, ' ')}\n\n`);

/** The id a reconnecting client last saw (`Last-Event-ID` header), if any. */
export function readLastEventId(request: Request): string | undefined {
  const v = request.headers.get('last-event-id')?.trim();
  return v ? v : undefined;
}
