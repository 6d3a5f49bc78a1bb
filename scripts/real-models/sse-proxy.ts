import { forward, startLoopbackProxy, type LoopbackProxy } from './loopback-proxy';

/**
 * A proxy between Parley and llama-server for tests that need the model server to misbehave:
 * every request passes through unchanged, and the body of a streamed answer goes through `shape`
 * (held back, cut off).
 */
export type SseProxy = LoopbackProxy;

export function startSseProxy(apiUrl: string, shape: (events: AsyncGenerator<string>) => ReadableStream<Uint8Array>): SseProxy {
  const upstream = apiUrl.replace(/\/v1$/, '');
  return startLoopbackProxy(async (req) => {
    const res = await forward(upstream, req);
    if (!res.headers.get('content-type')?.includes('event-stream')) return res;
    return new Response(shape(sseEvents(res.body!)), { headers: { 'content-type': 'text/event-stream' } });
  });
}

/**
 * The stream's SSE events one by one, each with its blank line. The tiny model writes its whole
 * answer in a few milliseconds, often in one network chunk: per event is the only way to pace it.
 */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    for (let at = buf.indexOf('\n\n'); at >= 0; at = buf.indexOf('\n\n')) {
      yield buf.slice(0, at + 2);
      buf = buf.slice(at + 2);
    }
  }
  if (buf) yield buf;
}

const encoder = new TextEncoder();

/** Each event `ms` after the one before: a slow model. */
export const oneEventEvery =
  (ms: number) =>
  (events: AsyncGenerator<string>): ReadableStream<Uint8Array> =>
    new ReadableStream({
      async pull(controller) {
        const { value, done } = await events.next();
        if (done) return controller.close();
        await Bun.sleep(ms);
        controller.enqueue(encoder.encode(value));
      },
    });

/** The first `count` events, then silence with the connection held open: a model server that hung mid-answer. */
export const stallAfter =
  (count: number) =>
  (events: AsyncGenerator<string>): ReadableStream<Uint8Array> => {
    let sent = 0;
    return new ReadableStream({
      async pull(controller) {
        const { value, done } = sent++ < count ? await events.next() : { value: undefined, done: undefined };
        if (done) return controller.close();
        if (value === undefined) {
          void events.return(undefined);
          return new Promise(() => {});
        }
        controller.enqueue(encoder.encode(value));
      },
    });
  };
