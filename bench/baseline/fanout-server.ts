/**
 * Baseline (d) for the fan-out figure: the floor for delivering one event to many streams. A raw
 * Bun.serve that keeps every subscriber's direct stream in a Set; a POST to any path ending
 * in `subscribeToGroup` opens a stream, any other POST publishes its `message` to all of them,
 * serialised once. Heartbeat comments go out every `<heartbeat-s>` seconds, like Parley's.
 *
 *   bun bench/baseline/fanout-server.ts <port> <data-dir (unused)> [heartbeat-s]
 */
const port = Number(process.argv[2] ?? 0);
const heartbeatMs = Number(process.argv[4] ?? 5) * 1000;
const encoder = new TextEncoder();
const streams = new Set<{ write(b: Uint8Array): void }>();
let seq = 0;

setInterval(() => {
  const beat = encoder.encode(': heartbeat\n\n');
  for (const c of streams) c.write(beat);
}, heartbeatMs);

const server = Bun.serve({
  hostname: '127.0.0.1',
  port,
  idleTimeout: 60,
  async fetch(req) {
    if (req.method === 'GET') return new Response('ok');
    if (new URL(req.url).pathname.endsWith('subscribeToGroup')) {
      // A "direct" stream writes straight to the socket: no queue between the write and the send.
      const body = new ReadableStream({
        type: 'direct',
        async pull(controller: ReadableStreamDirectController) {
          const sink = { write: (b: Uint8Array) => (controller.write(b), controller.flush()) };
          streams.add(sink);
          sink.write(encoder.encode(': open\n\n'));
          await new Promise<void>((resolve) => req.signal.addEventListener('abort', () => resolve()));
          streams.delete(sink);
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
    }
    const { message } = (await req.json()) as { message: string };
    const id = ++seq;
    const frame = encoder.encode(
      `event: message\nid: ${id}\nretry: 3000\ndata: ${JSON.stringify({ type: 'message.created', message: { id: String(id), type: 'message', role: 'user', content: message } })}\n\n`,
    );
    for (const c of streams) c.write(frame);
    return Response.json({ id: String(id), content: message });
  },
});
console.log(`listening on ${server.url}`);

export {}; // a module: its names stay its own
