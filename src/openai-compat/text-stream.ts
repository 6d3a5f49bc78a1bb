/**
 * An event stream's body from the texts a generator yields, written to the socket as they come
 * (Bun's direct stream: a write per text, no promise hops between the generator and the socket,
 * which a token-per-read local model pays for every token). The next text is asked for only once
 * the socket took the last (the upstream waits while the caller reads slowly). A stream quiet for
 * a whole `heartbeatMs` tick (a model reading a long prompt before its first token) sends a
 * comment line, which OpenAI's clients skip and which keeps the server's and proxies' idle timers
 * from closing it: one timer a stream, not one a text. When the caller leaves, `onCancel` runs at
 * once (it aborts the upstream request) and the generator is ended, so its `finally` settles what
 * the call used.
 */
const HEARTBEAT = ': keepalive\n\n';

export function textStream(source: AsyncGenerator<string>, onCancel: () => void, heartbeatMs: number): ReadableStream<Uint8Array> {
  let ended = false;
  let quiet = false;
  let ticker: ReturnType<typeof setInterval> | undefined;
  const end = () => {
    ended = true;
    clearInterval(ticker);
  };
  return new ReadableStream({
    type: 'direct',
    // Bun calls this once, when it starts sending the body; the stream lasts until it settles.
    async pull(controller: ReadableStreamDirectController) {
      const send = (text: string) => {
        const taken = controller.write(text);
        controller.flush();
        return taken;
      };
      ticker = setInterval(() => {
        if (quiet && !ended) send(HEARTBEAT);
        quiet = true;
      }, heartbeatMs);
      try {
        for (let next = await source.next(); !next.done && !ended; next = await source.next()) {
          if (!next.value) continue;
          quiet = false;
          const taken = send(next.value);
          // A promise: the socket is full; the text was taken, the next waits until it drains.
          if (taken instanceof Promise) await taken;
        }
        if (!ended) controller.close();
      } catch (err) {
        if (!ended) controller.close(err instanceof Error ? err : new Error(String(err)));
      } finally {
        end();
      }
    },
    cancel() {
      if (ended) return;
      end();
      onCancel();
      void source.return(undefined).catch(() => undefined);
    },
  } as unknown as ConstructorParameters<typeof ReadableStream<Uint8Array>>[0]);
}

/** An event's frame as OpenAI's streams write them: `data:` only (Chat Completions), or named by its type (Responses). */
export const dataFrame = (json: string) => `data: ${json}\n\n`;
export const namedFrame = (type: string, json: string) => `event: ${type}\ndata: ${json}\n\n`;
