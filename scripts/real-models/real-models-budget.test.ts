/**
 * Issue 18 item 4 against a real llama-server, through the compiled `parley`: the context budget.
 * The tiny model's vocabulary has 512 tokens, so its counts run several times higher than a real
 * model's: Parley's system prompt and tool definitions alone take most of a 2,048-token context.
 * Without a budget the history outgrows it within a few turns and every later turn is refused
 * ("the request exceeds the available context size").
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { buildBinaryOnce } from '../../test/build-binary';
import { startFakeSearxng } from '../../test/fakes/searxng';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from './llama-server';
import { readEvents, startParley, type Parley } from './parley-binary';
import { CUT_OFF } from '../../src/ai/openai-chat';

// Real processes on a shared 2-core machine; nothing here asserts on time.
setDefaultTimeout(600_000);

const dir = llamaServerDir();
const model = testModelPath();
const searx = startFakeSearxng();
afterAll(() => searx.stop());

const CONTEXT = 2048;

function rig(template: string, emails = ['ann@parley.test']) {
  let server: LlamaServer | undefined;
  let parley: Parley | undefined;
  beforeAll(async () => {
    server = await startLlamaServer({ dir, model, contextTokens: CONTEXT, templateFile: join(dir, 'templates', template) });
    const bin = await buildBinaryOnce();
    parley = await startParley(
      bin,
      {
        PARLEY_AI_PROVIDER: 'openai-chat',
        PARLEY_AI_BASE_URL: server.apiUrl,
        PARLEY_AI_API_KEY: 'none',
        PARLEY_AI_MODEL: 'tiny',
        // With web search, the chat model gets all three tools to drop (canvas, history, web search).
        PARLEY_SEARCH_PROVIDER: 'searxng',
        PARLEY_SEARXNG_URL: searx.url,
        // Two hundred turns in a few minutes: over the default 20 a minute.
        PARLEY_RATE_LIMIT_AI: 'off',
        PARLEY_RATE_LIMIT_WRITE: 'off',
      },
      emails,
    );
  });
  afterAll(async () => {
    await parley?.stop();
    await server?.stop();
  });
  return () => parley!;
}

/** A chat turn read to its end: answered (done, or text cut at the rig's 64-token bound) or the error it ended with. */
async function chatTurn(p: Parley, body: Record<string, unknown>): Promise<{ ok: boolean; error?: string; conversationId?: string }> {
  const res = await p.call('chat/stream', body);
  if (res.status !== 200) return { ok: false, error: `HTTP ${res.status}: ${await res.text()}` };
  let text = '';
  let conversationId: string | undefined;
  for await (const e of readEvents(res)) {
    if (e.type === 'conversation.created') conversationId = e.conversationId;
    if (e.type === 'text.delta') text += e.delta;
    if (e.type === 'done') return { ok: text.trim().length > 0, conversationId, ...(text.trim() ? {} : { error: 'done without text' }) };
    if (e.type === 'error') return e.message === CUT_OFF && text.trim() ? { ok: true, conversationId } : { ok: false, error: e.message, conversationId };
  }
  return { ok: false, error: 'the stream ended without done or error' };
}

describe('a 200-turn conversation against a 2,048-token context', () => {
  const p = rig('Qwen-Qwen2.5-7B-Instruct.jinja');
  test('every turn answers: the oldest turns and then the tool definitions give way, never the newest message', async () => {
    let conversationId: string | undefined;
    const failures: string[] = [];
    for (let i = 1; i <= 200; i++) {
      const t = await chatTurn(p(), { message: `Turn ${i}: tell me what the little cat did next in the garden.`, ...(conversationId ? { conversationId } : {}) });
      conversationId ??= t.conversationId;
      if (!t.ok) failures.push(`turn ${i}: ${t.error}`);
      if (failures.length >= 3) break;
    }
    expect(failures).toEqual([]);
  });

  test('a message too long for the context alone is refused with a clear error, and the next one answers', async () => {
    const long = 'The cat sat on the mat and looked at the garden. '.repeat(300);
    const refused = await chatTurn(p(), { message: long });
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/^The message is too long for the AI model: it takes about \d+ tokens/);
    expect(await chatTurn(p(), { message: 'Tell me a short story.', conversationId: refused.conversationId })).toMatchObject({ ok: true });
  });
});

describe('a group of five with a hundred messages, against a 2,048-token context', () => {
  const emails = ['ann', 'bob', 'cy', 'dee', 'eve'].map((n) => `${n}@parley.test`);
  const p = rig('Mistral-Small-3.2-24B-Instruct-2506.jinja', emails);
  test('@ai keeps answering: the history is cut by tokens, not by a count of messages', async () => {
    const keys = p().keys;
    const group = await p().json('groupChat/createGroupChat', { name: 'Garden club' }, keys[0]);
    const { code } = await p().json('groupChat/createInvite', { groupChatId: group.id }, keys[0]);
    for (const key of keys.slice(1)) await p().json('groupChat/joinGroup', { code }, key);
    const outcomes: string[] = [];
    for (let i = 1; i <= 100; i++) {
      const key = keys[i % keys.length]!;
      const addressed = i % 25 === 0;
      // Long enough that the twenty newest alone outgrow the context (a message count cannot be the budget).
      const message = `${addressed ? '@ai ' : ''}Message ${i}: the roses by the fence need water, the tomatoes are nearly ripe, the beans climb the poles, and someone should mend the gate before the goats get into the lettuce again this week.`;
      if (!addressed) {
        await p().json('groupChat/sendGroupMessage', { groupChatId: group.id, message }, key);
        continue;
      }
      const ac = new AbortController();
      const stream = await p().call('groupChat/subscribeToGroup', { groupChatId: group.id }, keys[0], ac.signal);
      const events = readEvents(stream, ac.signal);
      await p().json('groupChat/sendGroupMessage', { groupChatId: group.id, message }, key);
      for await (const e of events) {
        if (e.type === 'assistant.failed') outcomes.push(`message ${i}: failed: ${p().lastLogCause() ?? e.message}`);
        else if (e.type === 'message.created' && e.message.role === 'assistant') outcomes.push(`message ${i}: answered`);
        else continue;
        break;
      }
      ac.abort();
    }
    expect(outcomes).toEqual([25, 50, 75, 100].map((i) => `message ${i}: answered`));
  });
});
