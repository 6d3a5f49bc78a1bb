/**
 * A fake OpenAI Responses API upstream for the research-relay figure: `POST /v1/responses` with
 * `stream: true` answers the real wire format (`event: <type>` + `data: {..., sequence_number}`)
 * — response.created, response.in_progress, the output item and content part, then `deltas`
 * `response.output_text.delta` events as fast as the reader takes them, then the closing events
 * and response.completed. Each delta's text is the time it was written (ms since the epoch) and a
 * space, so the reader can time every event end to end.
 * Also: `GET /v1/responses/:id` (with `stream=true&starting_after=N`: replay) and
 * `POST /v1/responses/:id/cancel`, which a background-mode client may call.
 *
 *   bun bench/fakes/research-upstream.ts <port> <deltas> [batch]
 */
const port = Number(process.argv[2] ?? 0);
const deltas = Number(process.argv[3] ?? 20_000);
const batch = Number(process.argv[4] ?? 100);
const encoder = new TextEncoder();
const nowMs = () => performance.timeOrigin + performance.now();

interface Stored {
  response: Record<string, unknown>;
  frames: string[];
}
const responses = new Map<string, Stored>();

const frame = (seq: number, type: string, fields: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...fields })}\n\n`;

function newResponse(model: string) {
  const id = `resp_${crypto.randomUUID().replace(/-/g, '')}`;
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'in_progress',
    background: true,
    model,
    output: [] as unknown[],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: null as unknown,
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    temperature: 1,
    top_p: 1,
  };
}

/** The whole event sequence of one response, produced lazily in batches of deltas. */
function* events(stored: Stored): Generator<string> {
  const r = stored.response as ReturnType<typeof newResponse>;
  const itemId = `msg_${r.id.slice(5)}`;
  let seq = 0;
  const emit = (type: string, fields: Record<string, unknown>) => {
    const f = frame(seq++, type, fields);
    stored.frames.push(f);
    return f;
  };
  yield emit('response.created', { response: { ...r, status: 'queued' } }) + emit('response.in_progress', { response: r });
  const item = { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] as unknown[] };
  yield emit('response.output_item.added', { output_index: 0, item }) +
    emit('response.content_part.added', { item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
  let text = '';
  for (let sent = 0; sent < deltas; ) {
    let chunk = '';
    const stamp = `${nowMs().toFixed(3)} `;
    for (let i = 0; i < batch && sent < deltas; i++, sent++) {
      text += stamp;
      chunk += emit('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta: stamp, logprobs: [] });
    }
    yield chunk;
  }
  const part = { type: 'output_text', text, annotations: [] };
  const done = { ...item, status: 'completed', content: [part] };
  const completed = { ...r, status: 'completed', output: [done], usage: { input_tokens: 10, output_tokens: deltas, total_tokens: deltas + 10 } };
  stored.response = completed;
  yield emit('response.output_text.done', { item_id: itemId, output_index: 0, content_index: 0, text, logprobs: [] }) +
    emit('response.content_part.done', { item_id: itemId, output_index: 0, content_index: 0, part }) +
    emit('response.output_item.done', { output_index: 0, item: done }) +
    emit('response.completed', { response: completed });
}

function sse(source: Iterator<string>): Response {
  const body = new ReadableStream<Uint8Array>({
    // Pull-driven: the next batch is made when the reader has taken the last one.
    pull(c) {
      const next = source.next();
      if (next.done) c.close();
      else c.enqueue(encoder.encode(next.value));
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
}

const server = Bun.serve({
  hostname: '127.0.0.1',
  port,
  idleTimeout: 120,
  async fetch(req) {
    const url = new URL(req.url);
    const parts = url.pathname.split('/').filter(Boolean); // v1 responses [id] [cancel]
    if (req.method === 'GET' && parts.length === 0) return new Response('ok');
    if (parts[1] !== 'responses') return Response.json({ error: { message: 'not found', type: 'invalid_request_error' } }, { status: 404 });
    if (req.method === 'POST' && parts.length === 2) {
      const body = (await req.json()) as { model?: string; stream?: boolean };
      const stored: Stored = { response: newResponse(body.model ?? 'fake-research'), frames: [] };
      responses.set(stored.response.id as string, stored);
      if (body.stream) return sse(events(stored));
      // Without streaming, run to completion and answer the final object.
      for (const _ of events(stored));
      return Response.json(stored.response);
    }
    const stored = responses.get(parts[2] ?? '');
    if (!stored) return Response.json({ error: { message: 'No response found', type: 'invalid_request_error' } }, { status: 404 });
    if (req.method === 'POST' && parts[3] === 'cancel') return Response.json({ ...stored.response, status: 'cancelled' });
    if (req.method === 'GET' && url.searchParams.get('stream') === 'true') {
      const after = Number(url.searchParams.get('starting_after') ?? -1);
      return sse(stored.frames.slice(after + 1)[Symbol.iterator]());
    }
    return Response.json(stored.response);
  },
});
console.log(`listening on ${server.url}`);

export {}; // a module: its names stay its own
