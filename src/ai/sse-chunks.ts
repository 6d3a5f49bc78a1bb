/**
 * The openai SDK reads a stream by appending each network chunk to a buffer and cutting one
 * event at a time off its front with `slice`, which copies the rest: a chunk that holds n events
 * costs O(n²) bytes copied. Upstreams that are fast, or a reader that falls behind, deliver
 * chunks of hundreds of events (a local model server, a burst of deltas) and the relay spends
 * most of its time copying (bench/RESULTS.md). Handing the SDK one event per chunk keeps it
 * linear; the bytes are views, not copies, and any split is correct for an SSE parser.
 */

const LF = 0x0a;

/** Re-chunk an event stream so that every chunk ends at an event boundary (`\n\n`) where it can. */
export function splitEventChunks(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  let carry: Uint8Array | undefined;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        let buf = chunk;
        if (carry) {
          buf = new Uint8Array(carry.length + chunk.length);
          buf.set(carry);
          buf.set(chunk, carry.length);
          carry = undefined;
        }
        let start = 0;
        for (let i = 1; i < buf.length; i++) {
          if (buf[i] === LF && buf[i - 1] === LF) {
            controller.enqueue(buf.subarray(start, i + 1));
            start = i + 1;
          }
        }
        if (start < buf.length) carry = buf.subarray(start);
      },
      flush(controller) {
        if (carry?.length) controller.enqueue(carry);
      },
    }),
  );
}

/** `fetch` for the openai SDK (`new OpenAI({ fetch: eventChunkedFetch })`): event streams come one event per chunk. */
export const eventChunkedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const res = await fetch(input, init);
  if (!res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) return res;
  return new Response(splitEventChunks(res.body), { status: res.status, statusText: res.statusText, headers: res.headers });
};
