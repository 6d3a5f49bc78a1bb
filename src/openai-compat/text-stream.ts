/**
 * An event stream's body from the texts a generator yields, pulled as the socket takes them (the
 * upstream waits while the caller reads slowly). A stream quiet for `heartbeatMs` (a model
 * reading a long prompt before its first token) sends a comment line, which OpenAI's clients skip
 * and which keeps the server's and proxies' idle timers from closing it. When the caller leaves,
 * `onCancel` runs at once (it aborts the upstream request) and the generator is ended, so its
 * `finally` settles what the call used.
 */
const BEAT = Symbol('heartbeat');
const HEARTBEAT = new TextEncoder().encode(': keepalive\n\n');

export function textStream(source: AsyncGenerator<string>, onCancel: () => void, heartbeatMs: number): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let pending: Promise<IteratorResult<string>> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          // An empty text sends nothing; a pull must enqueue or end, or the stream stalls.
          while (true) {
            pending ??= source.next();
            let timer: ReturnType<typeof setTimeout> | undefined;
            const beat = new Promise<typeof BEAT>((resolve) => (timer = setTimeout(resolve, heartbeatMs, BEAT)));
            const got = await Promise.race([pending, beat]);
            clearTimeout(timer);
            if (got === BEAT) return controller.enqueue(HEARTBEAT);
            pending = undefined;
            if (got.done) return controller.close();
            if (got.value) return controller.enqueue(enc.encode(got.value));
          }
        } catch (err) {
          controller.error(err);
        }
      },
      cancel() {
        onCancel();
        void source.return(undefined).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

/** An event's frame as OpenAI's streams write them: `data:` only (Chat Completions), or named by its type (Responses). */
export const dataFrame = (json: string) => `data: ${json}\n\n`;
export const namedFrame = (type: string, json: string) => `event: ${type}\ndata: ${json}\n\n`;
