/**
 * A local server speaking Anthropic's Messages API as the real one does:
 * - `POST /v1/messages` with `stream: true`: server-sent events named `message_start`,
 *   `content_block_start`, `content_block_delta` (`text_delta`, `thinking_delta`,
 *   `signature_delta`, `input_json_delta`), `content_block_stop`, `message_delta` (stop_reason
 *   and usage), `message_stop`, with `ping`s between, or an `error` event mid-stream.
 * - `GET /v1/models`: the model list.
 * Requests are checked as the API checks them: the key (`x-api-key` or a bearer token), `anthropic-version`, a JSON body
 * with `model`, `max_tokens`, `messages` alternating from a user turn and no empty text block,
 * tool results answering the previous turn's tool uses; anything else is the API's 400/401
 * error shape. Tests script each round with `script` and read `requests`.
 */

export type FakeBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface FakeRound {
  blocks: FakeBlock[];
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal';
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  /** Send an `error` event after this many blocks (an overloaded API mid-answer). */
  errorAfter?: number;
  /** Answer with this HTTP status and the API's error body instead. */
  fail?: { status: number; type: string; message: string };
}

export interface FakeAnthropic {
  url: string;
  apiKey: string;
  requests: { headers: Record<string, string>; body: any }[];
  script: (body: any, round: number) => FakeRound;
  models: string[];
  stop(): void;
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const apiError = (status: number, type: string, message: string) =>
  Response.json({ type: 'error', error: { type, message }, request_id: 'req_fake' }, { status });

/** What the real API refuses, as its 400 message says it; undefined when the body is fine. */
function refusal(body: any): string | undefined {
  if (!body || typeof body !== 'object') return 'body: Input should be an object';
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || !body.messages.length) return 'messages: at least one message is required';
  if (body.system !== undefined && !Array.isArray(body.system) && typeof body.system !== 'string') return 'system: Input should be a valid list';
  if (body.thinking && !(body.thinking.budget_tokens >= 1024 && body.thinking.budget_tokens < body.max_tokens)) return 'thinking.budget_tokens: must be ≥ 1024 and less than max_tokens';
  let previous: any;
  for (const [i, m] of body.messages.entries()) {
    if (m.role !== 'user' && m.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (i === 0 && m.role !== 'user') return 'messages: first message must use the "user" role';
    if (previous && previous.role === m.role) return 'messages: roles must alternate between "user" and "assistant"';
    const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (!Array.isArray(content) || !content.length) return `messages.${i}: content must be non-empty`;
    for (const b of content) {
      if (b.type === 'text' && !String(b.text ?? '').trim()) return `messages.${i}: text content blocks must be non-empty`;
      if (b.type === 'image' && !(b.source?.type === 'base64' ? b.source.data && /^image\//.test(b.source.media_type) : b.source?.type === 'url' && b.source.url))
        return `messages.${i}: image source is invalid`;
    }
    const uses = previous?.role === 'assistant' ? (previous.content as any[]).filter((b) => b?.type === 'tool_use').map((b) => b.id) : [];
    const results = content.filter((b: any) => b.type === 'tool_result').map((b: any) => b.tool_use_id);
    if (uses.length && uses.some((id: string) => !results.includes(id))) return `messages.${i}: tool_use ids were found without tool_result blocks immediately after`;
    if (body.thinking && m.role === 'assistant' && content.some((b: any) => b.type === 'tool_use') && content[0]?.type !== 'thinking')
      return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${content[0]?.type}\``;
    previous = { ...m, content };
  }
  for (const t of body.tools ?? []) if (!t.name || typeof t.input_schema !== 'object') return 'tools: each tool needs name and input_schema';
  return undefined;
}

export function startFakeAnthropic(opts: { apiKey?: string; models?: string[] } = {}): FakeAnthropic {
  const fake: FakeAnthropic = {
    url: '',
    apiKey: opts.apiKey ?? 'sk-ant-test',
    requests: [],
    script: () => ({ blocks: [{ type: 'text', text: 'Hello from Claude.' }] }),
    models: opts.models ?? ['claude-sonnet-4-6', 'claude-haiku-4-5'],
    stop: () => server.stop(true),
  };
  let rounds = 0;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      // The SDK sends the key as a bearer token (and Parley adds x-api-key); either must be right.
      const key = req.headers.get('x-api-key') ?? req.headers.get('authorization')?.replace(/^Bearer /, '');
      const bearer = req.headers.get('authorization')?.replace(/^Bearer /, '');
      if (key !== fake.apiKey || (bearer !== undefined && bearer !== fake.apiKey)) return apiError(401, 'authentication_error', 'invalid x-api-key');
      if (!req.headers.get('anthropic-version')) return apiError(400, 'invalid_request_error', 'anthropic-version: header is required');
      if (req.method === 'GET' && url.pathname === '/v1/models')
        return Response.json({ data: fake.models.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })), has_more: false, first_id: null, last_id: null });
      if (req.method !== 'POST' || url.pathname !== '/v1/messages') return apiError(404, 'not_found_error', 'Not found');
      let body: any;
      try {
        body = await req.json();
      } catch {
        return apiError(400, 'invalid_request_error', 'There was an error parsing the body');
      }
      fake.requests.push({ headers: Object.fromEntries(req.headers), body });
      const refused = refusal(body);
      if (refused) return apiError(400, 'invalid_request_error', refused);
      const round = fake.script(body, rounds++);
      if (round.fail) return apiError(round.fail.status, round.fail.type, round.fail.message);
      if (!body.stream) return apiError(400, 'invalid_request_error', 'this fake streams only');
      return new Response(streamOf(body, round), { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  return fake;
}

function streamOf(body: any, round: FakeRound): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  const usage = round.usage ?? { input: 10, output: 5 };
  const parts: string[] = [
    sse('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: 1, cache_read_input_tokens: usage.cacheRead ?? 0, cache_creation_input_tokens: usage.cacheWrite ?? 0 },
      },
    }),
    sse('ping', { type: 'ping' }),
  ];
  for (const [index, block] of round.blocks.entries()) {
    if (round.errorAfter === index) {
      parts.push(sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
      return chunks(parts, enc);
    }
    if (block.type === 'text') {
      parts.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      for (const piece of block.text.match(/.{1,6}/gs) ?? []) parts.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }));
    } else if (block.type === 'thinking') {
      parts.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      parts.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } }));
      parts.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } }));
    } else {
      parts.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
      const json = JSON.stringify(block.input);
      for (const piece of [json.slice(0, 5), json.slice(5)]) parts.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }));
    }
    parts.push(sse('content_block_stop', { type: 'content_block_stop', index }));
  }
  const stopReason = round.stopReason ?? (round.blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  parts.push(sse('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output } }));
  parts.push(sse('message_stop', { type: 'message_stop' }));
  return chunks(parts, enc);
}

function chunks(parts: string[], enc: TextEncoder): ReadableStream<Uint8Array> {
  return new ReadableStream({
    async start(controller) {
      for (const p of parts) {
        controller.enqueue(enc.encode(p));
        await Bun.sleep(0);
      }
      controller.close();
    },
  });
}
