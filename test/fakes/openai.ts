/**
 * A local OpenAI-compatible server speaking the real wire formats:
 * - Responses API: `POST /v1/responses` (stream, background), `GET /v1/responses/:id?stream=true&starting_after=N`,
 *   `POST /v1/responses/:id/cancel`. A background response runs on its own clock whether or not
 *   anyone is connected; every event carries `sequence_number`.
 * - Chat Completions: `POST /v1/chat/completions`, streamed (`data:` chunks with `delta.content`,
 *   `delta.reasoning_content`, `delta.tool_calls`, then `[DONE]`) or not.
 * Tests script the model with `responsesScript` / `chatScript` and read what was sent in `requests`.
 * Usage is reported as the real APIs report it: a streamed chat completion asked for it
 * (`stream_options.include_usage`) ends with a chunk of `choices: []` and `usage`; a plain one
 * carries `usage`; a Responses terminal event carries `response.usage`. Every usage sent is kept in
 * `reported`, so a test can hold Parley's records against what the provider said.
 */

import { contextRefusal, renderChatML, tokensOf } from './llama-template';

export type UpstreamEvent = Record<string, unknown> & { type: string };

export interface ChatTurn {
  /** Streamed deltas in order. */
  deltas: { content?: string; reasoning_content?: string; tool_calls?: unknown[] }[];
  finish_reason?: 'stop' | 'tool_calls' | 'length';
  /** Wait this long before the first streamed chunk (a model thinking quietly). */
  pauseMs?: number;
  /** The usage reported (Chat Completions' shape); default: counted from the request and the deltas. `false`: none, as servers that ignore `include_usage`. */
  usage?: ChatUsage | false;
  /** Stop after this many deltas and never end the stream (a server that hangs mid-answer). */
  hangAfter?: number;
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

interface FakeResponse {
  id: string;
  events: UpstreamEvent[];
  produced: number;
  cancelled: boolean;
  waiters: Set<() => void>;
  timer?: ReturnType<typeof setInterval>;
}

export interface FakeOpenAI {
  url: string;
  /** Every request body received, with its path. */
  requests: { path: string; body: any }[];
  /** Events of a Responses turn (between response.in_progress and the terminal event). */
  responsesScript: (body: any) => UpstreamEvent[] | { fail: number } | { terminal: UpstreamEvent[] };
  /** `fail`: answer with that status and `message` as the error (llama-server's "tools param requires --jinja flag", or a template's traceback). */
  chatScript: (body: any) => ChatTurn | { fail: number; message?: string };
  /**
   * What `GET /props` answers (llama-server's server properties); undefined: 404, as other
   * servers. Set, the fake also answers llama-server's `/apply-template` and `/tokenize`, and
   * refuses a chat request longer than `default_generation_settings.n_ctx` (llama-template.ts).
   */
  props?: unknown;
  /** Other GET endpoints by path, answered with this JSON: Ollama's `/api/version` and `/api/ps`, `/v1/models` (vLLM's `max_model_len`). */
  gets: Record<string, unknown>;
  /** Milliseconds between two upstream events (background clock). */
  eventDelayMs: number;
  /** End each create/retrieve stream after this many events, mid-response (a dropped upstream connection); the response runs on. */
  dropAfter?: number;
  responses: Map<string, FakeResponse>;
  cancelled: string[];
  /** Chat Completions streams whose client went away before the end (an abort reached the upstream). */
  aborted: number;
  /** Answer a cancel this many milliseconds late (a busy API; Parley waits up to 5 s). */
  cancelDelayMs: number;
  /** Every usage object the fake sent, in order (chat: Chat Completions' shape; responses: the Responses API's). */
  reported: { path: 'chat' | 'responses'; usage: any }[];
  /** The usage a Responses terminal event carries; default: counted from the request and the text. */
  responsesUsage?: (body: any) => unknown;
  /** The key every request must carry (`Authorization: Bearer …`), as a hosted API asks; undefined: none, as a local server. */
  apiKey?: string;
  stop(): void;
}

/** A deterministic count for the fake's default usage: a token per four characters. */
const fakeTokens = (text: string) => Math.ceil(text.length / 4);

export function startFakeOpenAI(opts: { apiKey?: string } = {}): FakeOpenAI {
  let n = 0;
  const enc = new TextEncoder();
  const fake: FakeOpenAI = {
    url: '',
    requests: [],
    responsesScript: () => textEvents('Hello from the fake.'),
    chatScript: () => ({ deltas: [{ content: 'Hello' }, { content: ' from chat.' }] }),
    eventDelayMs: 0,
    gets: {},
    responses: new Map(),
    cancelled: [],
    aborted: 0,
    cancelDelayMs: 0,
    reported: [],
    apiKey: opts.apiKey,
    stop: () => server.stop(true),
  };

  const wake = (r: FakeResponse) => {
    for (const w of r.waiters) w();
    r.waiters.clear();
  };

  function startResponse(body: any, events: UpstreamEvent[], terminal?: UpstreamEvent[]): FakeResponse {
    const id = `resp_fake_${++n}`;
    const resp = (status: string) => ({ id, object: 'response', status, model: body.model, background: !!body.background, output: [] });
    const usage = fake.responsesUsage?.(body) ?? usageOf(body, events);
    const withUsage = (e: UpstreamEvent) => {
      if (!/^response\.(completed|incomplete|failed)$/.test(e.type)) return e.response ? { ...e, response: { ...(e.response as object), id } } : e;
      fake.reported.push({ path: 'responses', usage });
      return { ...e, response: { ...(e.response as object), id, usage } };
    };
    const all: UpstreamEvent[] = [
      { type: 'response.created', response: resp('queued') },
      { type: 'response.in_progress', response: resp('in_progress') },
      ...events,
      ...(terminal ?? [{ type: 'response.completed', response: resp('completed') }]).map(withUsage),
    ].map((e, i) => ({ ...e, sequence_number: i }));
    const r: FakeResponse = { id, events: all, produced: 0, cancelled: false, waiters: new Set() };
    fake.responses.set(id, r);
    const tick = () => {
      if (r.cancelled || r.produced >= r.events.length) {
        clearInterval(r.timer);
        return;
      }
      r.produced++;
      wake(r);
    };
    if (fake.eventDelayMs > 0) r.timer = setInterval(tick, fake.eventDelayMs);
    else r.produced = r.events.length;
    return r;
  }

  function streamResponse(r: FakeResponse, after: number): Response {
    let sent = 0;
    // Sequence numbers are the events' indexes.
    let next = after + 1;
    const stream = new ReadableStream({
      async pull(controller) {
        while (true) {
          if (r.cancelled || next >= r.events.length) {
            controller.close();
            return;
          }
          if (next < r.produced) {
            // What is already produced goes out in chunks of up to 64 events, as a real server's buffer would.
            let chunk = '';
            const end = Math.min(r.produced, next + 64, fake.dropAfter !== undefined ? next + fake.dropAfter - sent : Infinity);
            for (; next < end; next++, sent++) chunk += `event: ${r.events[next]!.type}\ndata: ${JSON.stringify(r.events[next])}\n\n`;
            controller.enqueue(enc.encode(chunk));
            if (fake.dropAfter !== undefined && sent >= fake.dropAfter) controller.close(); // the connection ends mid-response
            else if (next >= r.events.length) controller.close();
            return;
          }
          await new Promise<void>((res) => r.waiters.add(res));
        }
      },
    });
    return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
  }

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body: any = req.method === 'POST' ? await req.json().catch(() => ({})) : undefined;
      fake.requests.push({ path: `${req.method} ${url.pathname}${url.search}`, body });
      // OpenAI's answer to a missing or wrong key, on every endpoint.
      if (fake.apiKey !== undefined && req.headers.get('authorization') !== `Bearer ${fake.apiKey}`)
        return Response.json({ error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }, { status: 401 });
      if (req.method === 'POST' && url.pathname === '/v1/responses') {
        const script = fake.responsesScript(body);
        if ('fail' in script) return Response.json({ error: { message: 'fake upstream failure', type: 'server_error' } }, { status: script.fail });
        const r = Array.isArray(script) ? startResponse(body, script) : startResponse(body, [], script.terminal);
        if (!body.stream) return Response.json({ id: r.id, object: 'response', status: 'queued' });
        return streamResponse(r, -1);
      }
      const m = url.pathname.match(/^\/v1\/responses\/([^/]+)(\/cancel)?$/);
      if (m) {
        const r = fake.responses.get(m[1]!);
        if (!r) return Response.json({ error: { message: 'No response found', type: 'invalid_request_error' } }, { status: 404 });
        if (m[2]) {
          if (fake.cancelDelayMs) await Bun.sleep(fake.cancelDelayMs);
          r.cancelled = true;
          fake.cancelled.push(r.id);
          wake(r);
          return Response.json({ id: r.id, object: 'response', status: 'cancelled' });
        }
        return streamResponse(r, Number(url.searchParams.get('starting_after') ?? -1));
      }
      if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
        const refused = fake.props !== undefined ? contextRefusal(body, fake.props) : undefined;
        if (refused) return refused;
        const turn = fake.chatScript(body);
        if ('fail' in turn) return Response.json({ error: { code: turn.fail, message: turn.message ?? 'fake upstream failure', type: 'server_error' } }, { status: turn.fail });
        const id = `chatcmpl_${++n}`;
        const usage = turn.usage === false ? undefined : (turn.usage ?? chatUsage(body, turn));
        if (!body.stream) {
          const content = turn.deltas.map((d) => d.content ?? '').join('');
          const reasoning = turn.deltas.map((d) => d.reasoning_content ?? '').join('');
          const toolCalls = turn.deltas.flatMap((d) => (d.tool_calls ?? []) as { index?: number }[]).map(({ index: _index, ...c }) => c);
          if (usage) fake.reported.push({ path: 'chat', usage });
          return Response.json({
            id,
            object: 'chat.completion',
            created: 1_700_000_000,
            model: body.model,
            choices: [
              {
                index: 0,
                finish_reason: turn.finish_reason ?? 'stop',
                message: { role: 'assistant', content: toolCalls.length && !content ? null : content, ...(reasoning ? { reasoning_content: reasoning } : {}), ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
              },
            ],
            ...(usage ? { usage } : {}),
          });
        }
        const chunk = (delta: unknown, finish: string | null = null) =>
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        const reports = usage && body.stream_options?.include_usage;
        const deltas = turn.hangAfter === undefined ? turn.deltas : turn.deltas.slice(0, turn.hangAfter);
        const frames = [
          chunk({ role: 'assistant', content: '' }),
          ...deltas.map((d) => chunk(d)),
          ...(turn.hangAfter === undefined
            ? [
                chunk({}, turn.finish_reason ?? 'stop'),
                // The usage chunk OpenAI sends last when asked: no choices.
                ...(reports ? [`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model, choices: [], usage })}\n\n`] : []),
                'data: [DONE]\n\n',
              ]
            : []),
        ];
        if (reports && turn.hangAfter === undefined) fake.reported.push({ path: 'chat', usage });
        let finished = false;
        const gone = () => {
          if (!finished) fake.aborted++;
          finished = true;
        };
        req.signal.addEventListener('abort', gone, { once: true });
        return new Response(
          new ReadableStream({
            async start(controller) {
              if (turn.pauseMs) await Bun.sleep(turn.pauseMs);
              for (const f of frames) {
                if (fake.eventDelayMs) await Bun.sleep(fake.eventDelayMs);
                if (finished) return;
                controller.enqueue(enc.encode(f));
              }
              // Hanging: the stream stays open until the client goes.
              if (turn.hangAfter !== undefined) return;
              finished = true;
              controller.close();
            },
            cancel: gone,
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        );
      }
      if (req.method === 'GET' && url.pathname === '/props' && fake.props !== undefined) return Response.json(fake.props);
      if (req.method === 'POST' && url.pathname === '/apply-template' && fake.props !== undefined) return Response.json({ prompt: renderChatML(body) });
      if (req.method === 'POST' && url.pathname === '/tokenize' && fake.props !== undefined)
        return Response.json({ tokens: Array.from({ length: tokensOf(String(body.content ?? '')) }, (_, i) => i) });
      if (req.method === 'GET' && fake.gets[url.pathname] !== undefined) return Response.json(fake.gets[url.pathname]);
      return Response.json({ error: { message: 'not found' } }, { status: 404 });
    },
  });
  fake.url = `http://127.0.0.1:${server.port}/v1`;
  return fake;
}

/**
 * The fake's default Chat Completions usage, as a server reports it: the prompt by its JSON's
 * length, the answer by its deltas; reasoning by the length of its text.
 */
function chatUsage(body: any, turn: ChatTurn): ChatUsage {
  const prompt_tokens = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
  const completion_tokens = turn.deltas.length;
  const reasoning_tokens = Math.min(completion_tokens, fakeTokens(turn.deltas.map((d) => d.reasoning_content ?? '').join('')));
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens } };
}

/** The usage a completed Responses answer reports: the input by its JSON's length, the output by its text deltas. */
function usageOf(body: any, events: UpstreamEvent[]) {
  const input_tokens = Math.ceil(JSON.stringify(body.input ?? '').length / 4);
  const output_tokens = events.filter((e) => e.type === 'response.output_text.delta').length;
  return { input_tokens, input_tokens_details: { cached_tokens: 0 }, output_tokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input_tokens + output_tokens };
}

// --- builders of upstream Responses events (without sequence numbers) ---

export function textEvents(text: string, pieces = 3, itemId = 'msg_1'): UpstreamEvent[] {
  const size = Math.max(1, Math.ceil(text.length / pieces));
  const deltas: UpstreamEvent[] = [];
  for (let i = 0; i < text.length; i += size)
    deltas.push({ type: 'response.output_text.delta', item_id: itemId, output_index: 0, content_index: 0, delta: text.slice(i, i + size), logprobs: [] });
  return [
    { type: 'response.output_item.added', output_index: 0, item: { id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
    ...deltas,
    { type: 'response.output_text.done', item_id: itemId, output_index: 0, content_index: 0, text, logprobs: [] },
    { type: 'response.output_item.done', output_index: 0, item: { id: itemId, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] } },
  ];
}

export function reasoningEvents(summary: string, itemId = 'rs_1'): UpstreamEvent[] {
  return [
    { type: 'response.output_item.added', output_index: 0, item: { id: itemId, type: 'reasoning', summary: [] } },
    { type: 'response.reasoning_summary_text.delta', item_id: itemId, output_index: 0, summary_index: 0, delta: summary },
    { type: 'response.reasoning_summary_text.done', item_id: itemId, output_index: 0, summary_index: 0, text: summary },
    { type: 'response.output_item.done', output_index: 0, item: { id: itemId, type: 'reasoning', summary: [{ type: 'summary_text', text: summary }] } },
  ];
}

export function webSearchEvents(itemId: string, query: string, urls: string[]): UpstreamEvent[] {
  return [
    { type: 'response.output_item.added', output_index: 0, item: { id: itemId, type: 'web_search_call', status: 'in_progress', action: { type: 'search', query } } },
    { type: 'response.web_search_call.in_progress', item_id: itemId, output_index: 0 },
    { type: 'response.web_search_call.searching', item_id: itemId, output_index: 0 },
    { type: 'response.web_search_call.completed', item_id: itemId, output_index: 0 },
    {
      type: 'response.output_item.done',
      output_index: 0,
      item: { id: itemId, type: 'web_search_call', status: 'completed', action: { type: 'search', query, sources: urls.map((url) => ({ type: 'url', url })) } },
    },
  ];
}

/**
 * A Chat Completions script: the first turn calls the given function tools (one tool round), every
 * later turn answers `answer`.
 */
export function toolCallsThenAnswer(calls: { id: string; name: string; args: unknown }[], answer: string): () => ChatTurn {
  let turn = 0;
  return () =>
    turn++ === 0
      ? {
          deltas: [{ tool_calls: calls.map((c, index) => ({ index, id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })) }],
          finish_reason: 'tool_calls',
        }
      : { deltas: [{ content: answer }] };
}

export function functionCallEvents(callId: string, name: string, args: unknown): UpstreamEvent[] {
  const item = { id: `fc_${callId}`, type: 'function_call', call_id: callId, name, arguments: JSON.stringify(args), status: 'completed' };
  return [
    { type: 'response.output_item.added', output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } },
    { type: 'response.function_call_arguments.delta', item_id: item.id, output_index: 0, delta: item.arguments },
    { type: 'response.function_call_arguments.done', item_id: item.id, output_index: 0, arguments: item.arguments },
    { type: 'response.output_item.done', output_index: 0, item },
  ];
}

export const failedTerminal = (message: string): { terminal: UpstreamEvent[] } => ({
  terminal: [{ type: 'response.failed', response: { id: 'x', object: 'response', status: 'failed', error: { code: 'server_error', message } } }],
});

/** A `GET /v1/models` answer in the OpenAI wire format, for `fake.gets['/v1/models']`. */
export const modelList = (ids: string[]) => ({ object: 'list', data: ids.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })) });
