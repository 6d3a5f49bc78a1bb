import { t } from 'elysia';
import { defineOperation } from '../../src/http/operation';
import { sseComment } from '../../src/http/sse';
import { sseMessage } from '../sse';

/**
 * Operations that exist only in tests, mounted with `createTestContext({extraOperations})`, to
 * prove the machinery (rate limits, stream caps, shutdown) before the real expensive and
 * streaming operations land. The real ones are covered by the same code paths in register.ts.
 */

/** Yields `open`, then one numbered frame every `everyMs` (never, when 0), until the client leaves or the server stops. */
export const testStreamOp = defineOperation({
  path: 'test/stream',
  summary: 'test-only event stream',
  input: t.Object({ everyMs: t.Optional(t.Integer({ minimum: 0 })) }),
  output: t.Object({ n: t.Integer() }),
  kind: 'sse',
  handler: async function* ({ input }) {
    yield sseComment('open');
    for (let n = 1; ; n++) {
      // everyMs 0: park forever, like a subscriber waiting for a group message that never comes
      await (input.everyMs ? Bun.sleep(input.everyMs) : new Promise(() => undefined));
      yield sseMessage({ id: String(n), data: { n } });
    }
  },
});

export const testExpensiveOp = defineOperation({
  path: 'test/expensive',
  summary: 'test-only rate-limited operation',
  input: t.Object({}),
  output: t.Object({ ok: t.Boolean() }),
  rateLimit: 'ai',
  handler: () => ({ ok: true }),
});

export const testOps = [testStreamOp, testExpensiveOp];

/**
 * Reads an SSE body across several waits without losing a chunk: the reader and any pending
 * read are kept between calls. `until` returns the new text since the last call.
 */
export class SseReader {
  private readonly reader: { read(): Promise<{ done: boolean; value?: Uint8Array | string }>; cancel(): Promise<void> };
  private readonly decoder = new TextDecoder();
  private pending: Promise<{ done: boolean; value?: Uint8Array | string }> | undefined;
  ended = false;
  all = '';

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = (body as ReadableStream<Uint8Array | string>).getReader();
  }

  async until(predicate: (text: string) => boolean, timeoutMs = 3000): Promise<{ text: string; ended: boolean }> {
    let text = '';
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && !predicate(text) && Date.now() < deadline) {
      this.pending ??= this.reader.read();
      const next = await Promise.race([this.pending, Bun.sleep(Math.max(1, deadline - Date.now())).then(() => undefined)]);
      if (!next) break;
      this.pending = undefined;
      if (next.done) this.ended = true;
      // In process (app.handle) Elysia enqueues strings; over a socket they arrive as bytes.
      else text += typeof next.value === 'string' ? next.value : this.decoder.decode(next.value, { stream: true });
    }
    this.all += text;
    return { text, ended: this.ended };
  }

  cancel() {
    return this.reader.cancel().catch(() => undefined);
  }
}

/** Read until `predicate` holds, the stream ends or the time is up (one-shot form of SseReader). */
export const readSse = (body: ReadableStream<Uint8Array>, predicate: (text: string) => boolean, timeoutMs = 3000) =>
  new SseReader(body).until(predicate, timeoutMs);
