import { describe, expect, test } from 'bun:test';
import { AiError } from '../src/ai/ai.types';
import { answerRoom, fitContext, SHORTENED, type RenderRequest } from '../src/ai/fit-context';
import type { ModelContext } from '../src/ai/model-context';
import { shapeChatMessages, type ChatTurn } from '../src/ai/shape-chat-messages';

/**
 * A model server that counts a word as a token and adds `perMessage` tokens of template around
 * each message (more than the budget's own per-turn allowance when asked, as real templates do).
 */
function contextOf(size: number | undefined, perMessage = 4): ModelContext & { requests: number } {
  const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
  const ctx = {
    kind: 'llama.cpp' as const,
    contextTokens: size,
    source: 'a test',
    requests: 0,
    counter: {
      exact: true,
      countText: async (text: string) => words(text),
      async countRequest(messages: unknown[], tools: unknown[]) {
        ctx.requests++;
        return (messages as { content: string }[]).reduce((n, m) => n + perMessage + words(String(m.content)), 0) + (tools as string[]).reduce((n, t) => n + words(t), 0);
      },
    },
  };
  return ctx;
}

const render: RenderRequest<string> = (turns, tools) => ({ messages: shapeChatMessages(turns), tools });
const words = (n: number, w = 'word') => Array.from({ length: n }, () => w).join(' ');
const system: ChatTurn = { role: 'system', content: words(10, 'rule') };

/** A conversation of `n` exchanges of ten-word turns, then the newest user turn. */
function conversation(n: number): ChatTurn[] {
  const turns: ChatTurn[] = [system];
  for (let i = 0; i < n; i++) turns.push({ role: 'user', content: `q${i} ${words(9)}` }, { role: 'assistant', content: `a${i} ${words(9)}` });
  turns.push({ role: 'user', content: `newest ${words(9)}` });
  return turns;
}

describe('fitContext: the context budget', () => {
  test('no known context: the request goes as it is, with no answer limit', async () => {
    const turns = conversation(50);
    const fitted = await fitContext(turns, ['tool'], contextOf(undefined), 0, render);
    expect(fitted).toEqual({ turns, tools: ['tool'], leftOut: { turns: 0, tools: false, shortened: 0 } });
  });

  test('a request that fits goes whole; the answer may use what the prompt leaves', async () => {
    const turns = conversation(2);
    const fitted = await fitContext(turns, [], contextOf(1000), 0, render);
    expect(fitted.turns).toEqual(turns);
    // 6 messages of 10 words + 4 each = 84.
    expect(fitted.maxTokens).toBe(1000 - 84);
  });

  test('over the room: the oldest exchanges go, the system message and the newest turn stay, the history starts with a user turn', async () => {
    const turns = conversation(100);
    const fitted = await fitContext(turns, [words(20, 'tooldef')], contextOf(800), 0, render);
    const kept = fitted.turns;
    expect(kept[0]).toEqual(system);
    expect(kept.at(-1)).toEqual(turns.at(-1)!);
    expect(kept[1]!.role).toBe('user');
    // The kept history is the newest part, in order.
    expect(turns.slice(turns.length - (kept.length - 1))).toEqual(kept.slice(1));
    expect(fitted.tools).toEqual([words(20, 'tooldef')]);
    expect(fitted.leftOut.turns).toBeGreaterThan(100);
    // Room for the answer: a quarter of the context.
    expect(fitted.maxTokens!).toBeGreaterThanOrEqual(answerRoom(800, 0));
    // Most of the room is used (the per-turn allowance overcounts this template a little).
    expect(800 - fitted.maxTokens!).toBeGreaterThan(400);
  });

  test('tool definitions that do not fit beside the newest turn are left out, and the history takes the room', async () => {
    const fitted = await fitContext(conversation(100), [words(700, 'tooldef')], contextOf(800), 0, render);
    expect(fitted.tools).toEqual([]);
    expect(fitted.leftOut.tools).toBe(true);
    expect(fitted.turns.length).toBeGreaterThan(30);
  });

  test('templates costlier than the estimate: the exact count decides, and the request still fits', async () => {
    const ctx = contextOf(800, 30);
    const fitted = await fitContext(conversation(100), [], ctx, 0, render);
    expect(await ctx.counter.countRequest(shapeChatMessages(fitted.turns), [])).toBeLessThanOrEqual(600);
    expect(fitted.maxTokens).toBeGreaterThanOrEqual(200);
  });

  test('a newest message too long on its own is refused with a clear message, not sent', async () => {
    const turns: ChatTurn[] = [system, { role: 'user', content: words(700) }];
    const err = await fitContext(turns, [], contextOf(800), 0, render).catch((e) => e);
    expect(err).toBeInstanceOf(AiError);
    expect(err.message).toBe(
      'The message is too long for the AI model: it takes about 718 tokens, and the model has room for 600 beside its answer. Shorten it, or use a model with a larger context.',
    );
  });

  test('the newest turn’s tool output is shortened before the turn would fail', async () => {
    const turns: ChatTurn[] = [
      system,
      { role: 'user', content: 'search my history please' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'search_history', arguments: '{}' }] },
      { role: 'tool', callId: 'c1', name: 'search_history', content: words(2000, 'found') },
    ];
    const fitted = await fitContext(turns, [], contextOf(800), 0, render);
    const output = fitted.turns.at(-1)!;
    expect(output.role).toBe('tool');
    expect(output.content.endsWith(SHORTENED)).toBe(true);
    expect(output.content.length).toBeLessThan(words(600, 'found').length);
    expect(fitted.leftOut.shortened).toBe(1);
  });

  test('PARLEY_AI_ANSWER_TOKENS set: the answer is limited to it, and that much is kept free', async () => {
    const fitted = await fitContext(conversation(100), [], contextOf(800), 100, render);
    expect(fitted.maxTokens).toBe(100);
    expect(await contextOf(800).counter.countRequest(shapeChatMessages(fitted.turns), [])).toBeLessThanOrEqual(700);
    expect((await fitContext(conversation(1), [], contextOf(800), 100, render)).maxTokens).toBe(100);
  });

  test('the room kept for the answer: PARLEY_AI_ANSWER_TOKENS up to half the context, else a quarter up to 4,096', () => {
    expect(answerRoom(2048, 0)).toBe(512);
    expect(answerRoom(131072, 0)).toBe(4096);
    expect(answerRoom(2048, 300)).toBe(300);
    expect(answerRoom(2048, 5000)).toBe(1024);
  });
});

/** contextOf's server with a bound known without counting (bound-request.ts), and the requests it was told to expect. */
function boundedContext(size: number, bound: number | undefined) {
  const ctx = contextOf(size);
  const expected: unknown[][] = [];
  ctx.counter.boundRequest = () => bound;
  ctx.counter.expectRequest = (messages) => void expected.push(messages);
  return Object.assign(ctx, { expected });
}

describe('fitContext: a bound instead of a count', () => {
  test('a request whose bound fits goes without a count; the answer may use what the window leaves beside the bound', async () => {
    const ctx = boundedContext(1000, 300);
    const turns = conversation(2);
    const fitted = await fitContext(turns, [], ctx, 0, render);
    expect(ctx.requests).toBe(0);
    expect(fitted).toEqual({ turns, tools: [], maxTokens: 700, leftOut: { turns: 0, tools: false, shortened: 0 } });
    // The next turn's shape is learned meanwhile: this one, the answer and a new user message.
    expect(ctx.expected).toHaveLength(1);
    expect(ctx.expected[0]!.map((m: any) => m.role)).toEqual([...shapeChatMessages(turns).map((m: any) => m.role), 'assistant', 'user']);
  });

  test('a bound over the room, or none yet: counted exactly, and the shape that fitted is learned for next time', async () => {
    for (const bound of [800, undefined]) {
      const ctx = boundedContext(1000, bound);
      const turns = conversation(2);
      const fitted = await fitContext(turns, [], ctx, 0, render);
      expect(ctx.requests).toBe(1);
      expect(fitted.maxTokens).toBe(1000 - 84);
      expect(ctx.expected).toEqual([shapeChatMessages(turns), expect.any(Array)]);
    }
  });

  test('after the server refused a request for its size, the bound is not trusted: counted exactly', async () => {
    const ctx = boundedContext(1000, 300);
    await fitContext(conversation(2), [], ctx, 0, render, 100);
    expect(ctx.requests).toBe(1);
  });

  test('a tool round is not followed by a user turn: no next turn is learned from it', async () => {
    const ctx = boundedContext(1000, 300);
    const turns: ChatTurn[] = [
      system,
      { role: 'user', content: 'search my history please' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'search_history', arguments: '{}' }] },
      { role: 'tool', callId: 'c1', name: 'search_history', content: 'found' },
    ];
    await fitContext(turns, [], ctx, 0, render);
    expect(ctx.expected).toEqual([]);
  });

  test('a conversation that does not fit whole learns nothing ahead: its next turn is fitted by counting again', async () => {
    const ctx = boundedContext(800, undefined);
    const fitted = await fitContext(conversation(100), [], ctx, 0, render);
    expect(fitted.leftOut.turns).toBeGreaterThan(0);
    expect(ctx.expected).toEqual([]);
  });
});
