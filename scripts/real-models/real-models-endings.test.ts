/**
 * Issue 18 item 6, honest endings, through the compiled `parley` against a real llama-server
 * running the tiny model: a cut answer, reasoning and no answer, a stalled server, a template's
 * own error, a failed web search. Run by scripts/real-models/run.sh (outside the plain `bun test`).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from '../../test/build-binary';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer, type LlamaServerOptions } from './llama-server';
import { readEvents, startParley, type Parley } from './parley-binary';
import { stallAfter, startSseProxy, type SseProxy } from './sse-proxy';

// Real processes on a shared 2-core machine; nothing here asserts on time. A stall that Parley
// does not end by itself (Bun's 5-minute fetch timer) fails its test by this timeout.
setDefaultTimeout(90_000);

const dir = llamaServerDir();
const model = testModelPath();
// The endings' messages as docs/chat.md ("Endings") gives them: the test states the contract
// itself rather than importing it, so it runs (and fails) on a build without the fix too.
const CUT_OFF = 'The answer was cut off: the model reached its length limit (its context or max_tokens).';
const CUT_OFF_THINKING = 'The model reached its length limit while still thinking, before it wrote an answer.';
const ONLY_THOUGHT = 'The model only thought and wrote no answer (its reasoning never ended). Try again, or use a chat template that closes the thinking block.';

/** Nothing listens here: a SearxNG that is down. */
const SEARX_DOWN = 'http://127.0.0.1:9';

/** One llama-server and one parley in front of it (through `front`, e.g. a stalling proxy), for a describe block. */
function rig(server: Partial<LlamaServerOptions>, env: Record<string, string> = {}, front?: (apiUrl: string) => SseProxy) {
  let llama: LlamaServer | undefined;
  let parley: Parley | undefined;
  let proxy: SseProxy | undefined;
  beforeAll(async () => {
    llama = await startLlamaServer({ dir, model, contextTokens: 4096, ...server });
    proxy = front?.(llama.apiUrl);
    parley = await startParley(
      await buildBinaryOnce(),
      {
        PARLEY_AI_PROVIDER: 'openai-chat',
        PARLEY_AI_BASE_URL: proxy?.apiUrl ?? llama.apiUrl,
        PARLEY_AI_MODEL: 'tiny',
        PARLEY_RESEARCH_MODEL: 'tiny',
        PARLEY_RESEARCH_BREADTH: '1',
        PARLEY_RESEARCH_DEPTH: '1',
        ...env,
      },
      ['ann@parley.test', 'bob@parley.test'],
    );
  });
  afterAll(async () => {
    await parley?.stop();
    proxy?.stop();
    await llama?.stop();
  });
  return () => parley!;
}

/** A chat or research turn read to its end: its events, and the `x-request-id` of the request. */
async function turn(p: Parley, path: string, body: unknown) {
  const res = await p.call(path, body);
  expect(res.status).toBe(200);
  const events: any[] = [];
  for await (const e of readEvents(res)) {
    events.push(e);
    if (e.type === 'done' || e.type === 'error') break;
  }
  return { events, requestId: res.headers.get('x-request-id')! };
}

const text = (events: any[]) => events.filter((e) => e.type === 'text.delta').map((e) => e.delta).join('');
const logLines = (p: Parley) =>
  p
    .log()
    .split('\n')
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });

describe('the model stops at its length limit (max tokens)', () => {
  // The rig's answer limit (PARLEY_AI_ANSWER_TOKENS) bounds every answer: the tiny model never stops before it.
  const p = rig({ maxAnswerTokens: 16 });

  test('chat: the text streams and stays, and the stream ends with an error saying it was cut, not done', async () => {
    const { events } = await turn(p(), 'chat/stream', { message: 'Tell me a story about a cat.' });
    expect(text(events).length).toBeGreaterThan(0);
    expect(events.at(-1)).toEqual({ type: 'error', message: CUT_OFF });
    const conversationId = events.find((e) => e.type === 'conversation.created').conversationId;
    const { items } = await p().json('chat/getConversation', { conversationId });
    expect(items.at(-1)).toMatchObject({ role: 'assistant', content: text(events) });
  });

  test('group: the assistant keeps the cut answer, and its message.created says it was cut', async () => {
    const [ann, bob] = p().keys as [string, string];
    const group = await p().json('groupChat/createGroupChat', { name: 'Stories' }, ann);
    const { code } = await p().json('groupChat/createInvite', { groupChatId: group.id }, ann);
    await p().json('groupChat/joinGroup', { code }, bob);
    const ac = new AbortController();
    const stream = await p().call('groupChat/subscribeToGroup', { groupChatId: group.id }, bob, ac.signal);
    await p().json('groupChat/sendGroupMessage', { groupChatId: group.id, message: '@ai tell us a story' }, ann);
    let ending: any;
    for await (const e of readEvents(stream, ac.signal)) {
      if (e.type === 'assistant.failed' || (e.type === 'message.created' && e.message.role === 'assistant')) {
        ending = e;
        break;
      }
    }
    ac.abort();
    expect(ending).toMatchObject({ type: 'message.created', cutOff: CUT_OFF });
    expect(ending.message.content.length).toBeGreaterThan(0);
  });
});

describe('a template that always opens a thinking block: reasoning and no answer', () => {
  const p = rig({ templateFile: join(dir, 'templates', 'deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja'), maxAnswerTokens: 32 });

  test('the turn is not completed: the last event is an error that says there was no answer', async () => {
    const { events } = await turn(p(), 'chat/stream', { message: 'Tell me a story.' });
    expect(events.some((e) => e.type === 'reasoning_text.delta')).toBe(true);
    expect(text(events)).toBe('');
    expect(events.at(-1)?.type).toBe('error');
    // The tiny model never closes the block: it reaches its limit still thinking, or stops there.
    expect([CUT_OFF_THINKING, ONLY_THOUGHT]).toContain(events.at(-1).message);
  });
});

describe('an AI server that stalls mid-stream', () => {
  // Two events (the role, a token), then silence with the socket open.
  const p = rig({ maxAnswerTokens: 64 }, { PARLEY_AI_IDLE_TIMEOUT_S: '5' }, (apiUrl) => startSseProxy(apiUrl, stallAfter(2)));

  test('hits PARLEY_AI_IDLE_TIMEOUT_S, and the error says so', async () => {
    const { events } = await turn(p(), 'chat/stream', { message: 'Tell me a story about a dog.' });
    expect(events.at(-1)).toEqual({
      type: 'error',
      message: 'The AI provider sent nothing for 5 seconds, so Parley stopped waiting (PARLEY_AI_IDLE_TIMEOUT_S).',
    });
  });
});

describe('a chat template that refuses the request with its own error', () => {
  const p = rig({ templateFile: strictTemplate() });

  test('the user gets a short message; the raw template error is in the log with the request id', async () => {
    const { events, requestId } = await turn(p(), 'chat/stream', { message: 'Tell me about the forbidden forest.' });
    const last = events.at(-1);
    expect(last.type).toBe('error');
    expect(last.message.length).toBeLessThan(100);
    expect(last.message).not.toMatch(/jinja|exception|traceback|forbidden|\d{3}\): \d{3}/i);
    const logged = logLines(p()).find((l) => l.msg === 'response failed' && l.requestId === requestId);
    expect(logged?.upstream).toContain('refuses the word forbidden');
  });
});

describe('SearxNG down during deep research', () => {
  const p = rig({ maxAnswerTokens: 16 }, { PARLEY_SEARCH_PROVIDER: 'searxng', PARLEY_SEARXNG_URL: SEARX_DOWN });

  test('the stream says the search failed (a reasoning note before the empty results), and the log has it with the request id', async () => {
    const { events, requestId } = await turn(p(), 'chat/streamDeepResearch', { message: 'What do cats eat?' });
    const at = events.findIndex((e) => e.type === 'web_search.completed');
    expect(events[at].results).toEqual([]);
    expect(events[at - 2]).toEqual({ type: 'reasoning_text.delta', delta: 'The web search failed: The search provider could not be reached.' });
    expect(logLines(p()).some((l) => l.msg === 'web search failed' && l.requestId === requestId)).toBe(true);
  });
});

/** A ChatML template that refuses any user message with the word "forbidden", as strict templates refuse what they do not take. */
function strictTemplate(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'parley-strict-template-')), 'strict.jinja');
  writeFileSync(
    file,
    `{%- for message in messages -%}
{%- if message['role'] == 'user' and 'forbidden' in message['content'] -%}
{{- raise_exception('This template refuses the word forbidden. Traceback (most recent call last): File "<template>", line 3, in top-level template code') -}}
{%- endif -%}
{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}
`,
  );
  return file;
}
