import { afterAll, describe, expect, test } from 'bun:test';
import { providerFromEnv as createAiProvider } from '../src/connections/adapters';
import { testConfig } from '../src/config';
import type { AiEvent, AiTool, UpstreamCursor } from '../src/ai/ai.types';
import { AiError } from '../src/ai/ai.types';
import { readPage } from '../src/ai/read-page';
import { ThinkSplitter } from '../src/ai/think-splitter';
import { parseQueries } from '../src/ai/research-loop';
import { parseSseJson } from '../src/ai/sse-parse';
import { failedTerminal, functionCallEvents, reasoningEvents, startFakeOpenAI, textEvents, webSearchEvents } from './fakes/openai';
import { startFakeSearxng } from './fakes/searxng';

const openai = startFakeOpenAI();
const searx = startFakeSearxng();
afterAll(() => {
  openai.stop();
  searx.stop();
});

const responses = () => createAiProvider(testConfig({ aiProvider: 'openai-responses', aiBaseUrl: openai.url, aiApiKey: 'sk-test' }))!;
const chat = (extra: Parameters<typeof testConfig>[0] = {}) =>
  createAiProvider(
    testConfig({ aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', researchModel: 'small', searchProvider: 'searxng', searxngUrl: searx.url, fetchAllowPrivate: true, researchBreadth: 2, researchDepth: 1, ...extra }),
  )!;

async function collect(it: AsyncIterable<AiEvent>): Promise<AiEvent[]> {
  const out: AiEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}
const types = (evs: AiEvent[]) => evs.map((e) => e.type);
const text = (evs: AiEvent[]) => evs.map((e) => (e.type === 'text.delta' ? e.delta : '')).join('');

describe('AI providers', () => {
  test('none → no provider', () => {
    expect(createAiProvider(testConfig())).toBeUndefined();
  });

  test('openai-responses: background stream mapped onto the event union, images forwarded', async () => {
    openai.eventDelayMs = 0;
    openai.responsesScript = () => [
      ...reasoningEvents('Thinking about it.'),
      ...webSearchEvents('ws_1', 'bun sqlite', ['https://bun.sh/docs/api/sqlite']),
      ...textEvents('Bun has SQLite built in.'),
    ];
    const cursors: UpstreamCursor[] = [];
    const evs = await collect(
      responses().streamChat({
        research: true,
        messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What?', images: [{ imageUrl: 'data:image/png;base64,AAA', detail: 'low' }] }],
        onCursor: (c) => cursors.push(c),
      }),
    );
    expect(types(evs)).toEqual([
      'reasoning_text.delta', 'reasoning_text.done', 'web_search.in_progress', 'web_search.completed',
      'content_part.added', 'text.delta', 'text.delta', 'text.delta',
    ]);
    expect(evs[2]).toEqual({ type: 'web_search.in_progress', itemId: 'ws_1', query: 'bun sqlite' });
    expect(evs[3]).toEqual({ type: 'web_search.completed', results: [{ link: 'https://bun.sh/docs/api/sqlite', title: 'bun.sh', snippet: '' }] });
    expect(text(evs)).toBe('Bun has SQLite built in.');
    const req = openai.requests.findLast((r) => r.path === 'POST /v1/responses')!.body;
    expect(req).toMatchObject({ model: 'o4-mini-deep-research', background: true, stream: true, instructions: 'Be brief.' });
    expect(req.tools).toEqual([{ type: 'web_search_preview' }]);
    expect(req.input[0].content).toEqual([
      { type: 'input_text', text: 'What?' },
      { type: 'input_image', image_url: 'data:image/png;base64,AAA', detail: 'low' },
    ]);
    expect(cursors.at(-1)!.upstreamId).toMatch(/^resp_fake_/);
    const seqNums = cursors.map((c) => c.sequenceNumber);
    expect(seqNums).toEqual([...seqNums].sort((a, b) => a - b));
    // 2 lifecycle + 4 reasoning + 5 search + 7 text events + response.completed: the last is 18.
    expect(seqNums.at(-1)).toBe(18);
  });

  test('openai-responses: image generation and code interpreter items', async () => {
    openai.responsesScript = () => [
      { type: 'response.output_item.added', output_index: 0, item: { id: 'ig_1', type: 'image_generation_call', status: 'in_progress', output_format: 'png', size: 'auto' } },
      { type: 'response.image_generation_call.generating', item_id: 'ig_1', output_index: 0 },
      { type: 'response.output_item.done', output_index: 0, item: { id: 'ig_1', type: 'image_generation_call', status: 'completed', result: 'iVBORw0KGgo=' } },
      { type: 'response.output_item.added', output_index: 1, item: { id: 'ci_1', type: 'code_interpreter_call', status: 'in_progress', code: '' } },
      { type: 'response.code_interpreter_call.in_progress', item_id: 'ci_1', output_index: 1 },
      { type: 'response.output_item.done', output_index: 1, item: { id: 'ci_1', type: 'code_interpreter_call', status: 'completed', code: '1+1', outputs: [] } },
    ];
    const evs = await collect(responses().streamChat({ model: 'gpt-image-test', messages: [{ role: 'user', content: 'draw' }] }));
    expect(evs).toEqual([
      { type: 'image_generation.in_progress', itemId: 'ig_1', outputFormat: 'png' },
      { type: 'image_generation.completed', images: [{ type: 'base64', data: 'iVBORw0KGgo=' }], model: 'gpt-image-test' },
      { type: 'code_interpreter.in_progress', itemId: 'ci_1' },
      { type: 'code_interpreter.completed', itemId: 'ci_1' },
    ]);
  });

  test('openai-responses: resumeFrom (a restart) replays the response from its start and relays only what follows the cursor', async () => {
    openai.responsesScript = () => textEvents('abcdef', 6);
    const first: UpstreamCursor[] = [];
    await collect(responses().streamChat({ messages: [{ role: 'user', content: 'x' }], onCursor: (c) => first.push(c) }));
    const upstreamId = first[0]!.upstreamId;
    // Event 5 is the 2nd text delta: resuming after it yields the 4 later deltas.
    const evs = await collect(responses().streamChat({ messages: [], resumeFrom: { upstreamId, sequenceNumber: 5 } }));
    expect(text(evs)).toBe('cdef');
    expect(openai.requests.at(-1)!.path).toBe(`GET /v1/responses/${upstreamId}?stream=true`);
  });

  test('openai-responses: after a restart, a search announced before the cursor is not announced a second time', async () => {
    openai.responsesScript = () => [
      { type: 'response.output_item.added', output_index: 0, item: { id: 'ws_1', type: 'web_search_call', status: 'in_progress', action: { type: 'search', query: 'fox facts' } } },
      { type: 'response.web_search_call.in_progress', item_id: 'ws_1', output_index: 0 },
      { type: 'response.web_search_call.searching', item_id: 'ws_1', output_index: 0 },
      { type: 'response.web_search_call.completed', item_id: 'ws_1', output_index: 0 },
      // the item as some servers send it: without its action, the query only known from before
      { type: 'response.output_item.done', output_index: 0, item: { id: 'ws_1', type: 'web_search_call', status: 'completed' } },
      ...textEvents('Foxes are quick.', 2),
    ];
    const first: UpstreamCursor[] = [];
    const whole = await collect(responses().streamChat({ messages: [{ role: 'user', content: 'x' }], onCursor: (c) => first.push(c) }));
    expect(types(whole).filter((t) => t === 'web_search.in_progress')).toHaveLength(1);
    const upstreamId = first[0]!.upstreamId;
    // 0 created, 1 in_progress, 2 the search item, 3 its in_progress (announced, and stored,
    // before the "restart"), 4 searching: resume after 4.
    const evs = await collect(responses().streamChat({ messages: [], resumeFrom: { upstreamId, sequenceNumber: 4 } }));
    expect(types(evs)).not.toContain('web_search.in_progress');
    expect(text(evs)).toBe('Foxes are quick.');
    // The same when the connection breaks during the replay, again and again: each reconnect
    // continues after the last event fed, replayed or relayed.
    openai.dropAfter = 2;
    try {
      const before = openai.requests.length;
      const cut = await collect(responses().streamChat({ messages: [], resumeFrom: { upstreamId, sequenceNumber: 4 } }));
      expect(types(cut)).not.toContain('web_search.in_progress');
      expect(text(cut)).toBe('Foxes are quick.');
      const paths = openai.requests.slice(before).map((r) => r.path);
      expect(paths[0]).toBe(`GET /v1/responses/${upstreamId}?stream=true`);
      expect(paths[1]).toBe(`GET /v1/responses/${upstreamId}?stream=true&starting_after=1`);
    } finally {
      openai.dropAfter = undefined;
    }
  });

  test('openai-responses: a dropped upstream connection is picked up with starting_after, nothing lost or repeated', async () => {
    const full = 'abcdefghijklmnopqrstuvwxyz';
    openai.responsesScript = () => textEvents(full, full.length);
    openai.dropAfter = 7;
    try {
      const before = openai.requests.length;
      const evs = await collect(responses().streamChat({ messages: [{ role: 'user', content: 'x' }] }));
      expect(text(evs)).toBe(full);
      expect(types(evs).filter((t) => t === 'content_part.added')).toHaveLength(1);
      const retrieves = openai.requests.slice(before).filter((r) => r.path.includes('starting_after='));
      expect(retrieves.length).toBeGreaterThanOrEqual(3);
    } finally {
      openai.dropAfter = undefined;
    }
  });

  test('openai-responses: abort cancels upstream; failure and HTTP errors throw AiError', async () => {
    openai.responsesScript = () => textEvents('x'.repeat(50), 50);
    openai.eventDelayMs = 5;
    const ac = new AbortController();
    const seen: AiEvent[] = [];
    const run = (async () => {
      for await (const e of responses().streamChat({ messages: [{ role: 'user', content: 'x' }], signal: ac.signal })) {
        seen.push(e);
        if (seen.length === 3) ac.abort();
      }
    })();
    await expect(run).rejects.toBeInstanceOf(AiError);
    expect(openai.cancelled.length).toBe(1);
    openai.eventDelayMs = 0;
    openai.responsesScript = () => failedTerminal('model overloaded');
    await expect(collect(responses().streamChat({ messages: [{ role: 'user', content: 'x' }] }))).rejects.toThrow('model overloaded');
    openai.responsesScript = () => ({ fail: 500 });
    await expect(collect(responses().streamChat({ messages: [{ role: 'user', content: 'x' }] }))).rejects.toThrow('HTTP 500');
  });

  test('openai-responses: function calls run the tool and continue with previous_response_id', async () => {
    let turn = 0;
    openai.responsesScript = (body) =>
      turn++ === 0 ? functionCallEvents('call_1', 'echo', { word: 'hi' }) : body.previous_response_id ? textEvents('done', 1) : textEvents('wrong', 1);
    const tool: AiTool = {
      name: 'echo',
      description: 'echo',
      parameters: { type: 'object' },
      run: async (args, emit) => {
        emit({ type: 'code_interpreter.in_progress', itemId: 'echo' });
        return `echo ${args.word}`;
      },
    };
    const evs = await collect(responses().streamChat({ messages: [{ role: 'user', content: 'x' }], tools: [tool] }));
    expect(types(evs)).toEqual(['code_interpreter.in_progress', 'content_part.added', 'text.delta']);
    const follow = openai.requests.findLast((r) => r.path === 'POST /v1/responses')!.body;
    expect(follow.input).toEqual([{ type: 'function_call_output', call_id: 'call_1', output: 'echo hi' }]);
    expect(follow.previous_response_id).toMatch(/^resp_fake_/);
  });

  test('openai-responses: a model that never stops calling tools ends in an error, not an empty answer', async () => {
    let calls = 0;
    openai.responsesScript = () => functionCallEvents(`call_${++calls}`, 'echo', {});
    const tool: AiTool = { name: 'echo', description: 'echo', parameters: { type: 'object' }, run: async () => 'again' };
    await expect(collect(responses().streamChat({ messages: [{ role: 'user', content: 'x' }], tools: [tool] }))).rejects.toThrow(
      'The model kept calling tools instead of answering.',
    );
    expect(calls).toBe(16);
  });

  test('openai-chat: reasoning_content, <think> blocks and tool calls', async () => {
    let turn = 0;
    openai.chatScript = () =>
      turn++ === 0
        ? { deltas: [{ reasoning_content: 'hmm' }, { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'echo', arguments: '{"wo' } }] }, { tool_calls: [{ index: 0, function: { arguments: 'rd":"yo"}' } }] }], finish_reason: 'tool_calls' }
        : { deltas: [{ content: '<thi' }, { content: 'nk>plan</th' }, { content: 'ink>An' }, { content: 'swer' }] };
    const calls: unknown[] = [];
    const tool: AiTool = { name: 'echo', description: 'e', parameters: { type: 'object' }, run: async (a) => (calls.push(a), 'ok') };
    const evs = await collect(chat().streamChat({ messages: [{ role: 'user', content: 'q', images: [{ imageUrl: 'https://x/y.png' }] }], tools: [tool] }));
    expect(calls).toEqual([{ word: 'yo' }]);
    expect(evs).toEqual([
      { type: 'reasoning_text.delta', delta: 'hmm' },
      { type: 'reasoning_text.done' },
      { type: 'reasoning_text.delta', delta: 'plan' },
      { type: 'reasoning_text.done' },
      { type: 'content_part.added' },
      { type: 'text.delta', delta: 'An' },
      { type: 'text.delta', delta: 'swer' },
    ]);
    const last = openai.requests.findLast((r) => r.path === 'POST /v1/chat/completions')!.body;
    expect(last.messages[0].content[1]).toEqual({ type: 'image_url', image_url: { url: 'https://x/y.png' } });
    // The model's call id `c1` goes back in the nine-character form Mistral's templates demand, the same on both sides.
    expect(last.messages.at(-2).tool_calls).toEqual([{ id: 'call00001', type: 'function', function: { name: 'echo', arguments: '{"word":"yo"}' } }]);
    expect(last.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call00001', name: 'echo', content: 'ok' });
  });

  test('openai-chat: a model that keeps calling tools may call none in the last round, and answers', async () => {
    const asked: boolean[] = [];
    openai.chatScript = (body) => {
      asked.push(body.tool_choice !== 'none');
      return body.tool_choice !== 'none'
        ? { deltas: [{ tool_calls: [{ index: 0, id: `c${asked.length}`, type: 'function', function: { name: 'echo', arguments: '{}' } }] }], finish_reason: 'tool_calls' }
        : { deltas: [{ content: 'Done looking.' }] };
    };
    const tool: AiTool = { name: 'echo', description: 'e', parameters: { type: 'object' }, run: async () => 'again' };
    const evs = await collect(chat().streamChat({ messages: [{ role: 'user', content: 'q' }], tools: [tool] }));
    expect(asked).toEqual([true, true, true, true, true, true, true, false]);
    expect(evs.filter((e) => e.type === 'text.delta')).toEqual([{ type: 'text.delta', delta: 'Done looking.' }]);
    // One that calls a tool even then: an error, not a silent, empty answer.
    openai.chatScript = () => ({ deltas: [{ tool_calls: [{ index: 0, id: 'x', type: 'function', function: { name: 'echo', arguments: '{}' } }] }], finish_reason: 'tool_calls' });
    expect(await collect(chat().streamChat({ messages: [{ role: 'user', content: 'q' }], tools: [tool] })).then(() => 'answered', (e: Error) => e.message)).toBe(
      'The model kept calling tools instead of answering.',
    );
  });

  test('openai-chat research: plan → search → read → cited report; off-format planner falls back', async () => {
    openai.chatScript = (body) =>
      body.stream
        ? { deltas: [{ content: 'Report [1].' }] }
        : { deltas: [{ reasoning_content: 'which queries?' }, { content: '["sqlite wal", "bun sqlite"]' }] };
    searx.pagesRead.length = 0;
    const evs = await collect(chat().streamChat({ research: true, messages: [{ role: 'user', content: 'How does WAL work?' }] }));
    expect(types(evs)).toEqual([
      'reasoning_text.delta', 'reasoning_text.done',
      'web_search.in_progress', 'web_search.completed', 'web_search.in_progress', 'web_search.completed',
      'web_page.read', 'web_page.read',
      'content_part.added', 'text.delta',
    ]);
    expect(evs[2]).toMatchObject({ query: 'sqlite wal', numResults: 4 });
    expect((evs[3] as any).results[0]).toEqual({ link: `${searx.url}/page/sqlite-wal-1`, title: 'sqlite wal — result 1', snippet: 'Snippet 1 about sqlite wal.' });
    expect(searx.pagesRead.sort()).toEqual(['bun-sqlite-1', 'sqlite-wal-1']);
    // The pages read, numbered as the report cites them: the top result of each query, in order.
    expect(evs.filter((e) => e.type === 'web_page.read').map((e: any) => ({ n: e.n, url: e.url, title: e.title, read: e.read }))).toEqual([
      { n: 1, url: `${searx.url}/page/sqlite-wal-1`, title: 'Page sqlite-wal-1', read: true },
      { n: 2, url: `${searx.url}/page/bun-sqlite-1`, title: 'Page bun-sqlite-1', read: true },
    ]);
    const report = openai.requests.findLast((r) => r.body?.stream)!.body;
    expect(report.messages[0].content).toContain('Facts from sqlite-wal-1.');

    // A small model answering off-format: the question itself is searched.
    openai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'ok' }] } : { deltas: [{ content: '' }] });
    searx.queries.length = 0;
    const evs2 = await collect(chat().streamChat({ research: true, messages: [{ role: 'user', content: 'Why is the sky blue?' }] }));
    expect(searx.queries).toEqual(['Why is the sky blue?']);
    expect(types(evs2).at(-1)).toBe('text.delta');

    // An empty plan, or one of blank strings, in the first round: the question itself again.
    for (const plan of ['[]', '["", " "]']) {
      openai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'ok' }] } : { deltas: [{ content: plan }] });
      searx.queries.length = 0;
      await collect(chat().streamChat({ research: true, messages: [{ role: 'user', content: 'How deep is the Mariana Trench?' }] }));
      expect({ plan, searched: searx.queries }).toEqual({ plan, searched: ['How deep is the Mariana Trench?'] });
    }
  });

  test('research loop refuses private pages unless allowed', async () => {
    openai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'ok' }] } : { deltas: [{ content: '["q"]' }] });
    searx.pagesRead.length = 0;
    await collect(chat({ fetchAllowPrivate: false }).streamChat({ research: true, messages: [{ role: 'user', content: 'x' }] }));
    expect(searx.pagesRead).toEqual([]);
  });

  test('readPage: http(s) only, private refused, size bounded; parseQueries; think splitter', async () => {
    const page = `${searx.url}/page/abc`;
    expect(await readPage(page, { maxBytes: 10_000, timeoutMs: 2000, allowPrivate: false })).toBeUndefined();
    expect(await readPage('file:///etc/passwd', { maxBytes: 10_000, timeoutMs: 2000, allowPrivate: true })).toBeUndefined();
    const ok = await readPage(page, { maxBytes: 10_000, timeoutMs: 2000, allowPrivate: true });
    expect(ok).toEqual({ url: page, title: 'Page abc', text: 'Facts from abc.' });
    const cut = await readPage(page, { maxBytes: 20, timeoutMs: 2000, allowPrivate: true });
    expect(cut!.text.length).toBeLessThanOrEqual(20);
    // Allowed by host name even though it resolves to loopback (PARLEY_FETCH_ALLOW_HOSTS).
    expect(await readPage(page, { maxBytes: 10_000, timeoutMs: 2000, allowPrivate: false, allowHosts: ['127.0.0.1'] })).toEqual(ok);
    expect(parseQueries('Sure! ["a", {"query":"b"}]', 5)).toEqual(['a', 'b']);
    expect(parseQueries('1. first\n2. second\n3. third', 2)).toEqual(['first', 'second']);
    expect(parseQueries('', 2)).toBeUndefined();
    const s = new ThinkSplitter();
    const parts = [...s.push('a<th'), ...s.push('ink>b</think'), ...s.push('>c'), ...s.flush()];
    expect(parts.filter((p) => p.text)).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'reasoning', text: 'b' },
      { kind: 'text', text: 'c' },
    ]);
  });

  test('SSE parser: split chunks, CRLF, multi-line data, comments, [DONE]', async () => {
    const wire = ': hi\n\nevent: a\ndata: {"n":1}\n\ndata: {"n":\ndata: 2}\r\n\r\nid: 7\ndata: {"n":3}\n\ndata: [DONE]\n\ndata: {"n":4}\n\n';
    const bytes = new TextEncoder().encode(wire);
    for (const size of [1, 3, 7, bytes.length]) {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size));
          c.close();
        },
      });
      const got: unknown[] = [];
      for await (const e of parseSseJson(body)) got.push(e);
      expect(got).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    }
  });
});
