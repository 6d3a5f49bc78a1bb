/**
 * The bound that lets a request go without an exact count (src/ai/bound-request.ts), against a
 * rendering of its own; llama-server's real templates are checked in
 * scripts/real-models/real-models-bound.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import { createRequestBounds, printedBytes } from '../src/ai/bound-request';
import { renderChatML } from './fakes/llama-template';

function bounds() {
  const rendered: unknown[][] = [];
  const b = createRequestBounds(async (messages, tools) => {
    rendered.push(messages);
    return renderChatML({ messages: messages as any, tools });
  });
  return Object.assign(b, { rendered });
}

const system = { role: 'system', content: 'You are Parley.' };
const ask = (text: string) => [system, { role: 'user', content: text }];
const tools = [{ type: 'function', function: { name: 'search_history', parameters: { type: 'object' } } }];
/** Until the frames asked for are learned (a moment after they are asked for). */
async function learned(b: ReturnType<typeof bounds>, n: number): Promise<void> {
  const until = Date.now() + 3000;
  while (b.rendered.length < n && Date.now() < until) await Bun.sleep(10);
  await Bun.sleep(10);
}

describe('the bound of a request without a count', () => {
  test('unknown until its shape is learned; then at least the rendered bytes, for any text in the same shape', async () => {
    const b = bounds();
    expect(b.bound('t1', ask('Hello'), tools)).toBeUndefined();
    b.learn('t1', ask('Hello'), tools);
    b.learn('t1', ask('Another text, the same shape'), tools);
    await learned(b, 1);
    // Learned once, from the placeholder: never from the user's words.
    expect(b.rendered).toEqual([[system, { role: 'user', content: 'x' }]]);
    for (const text of ['Hello', 'Quotes "and" back\\slashes\nand lines', '你好，世界 🐱', 'x'.repeat(5000)]) {
      const bound = b.bound('t1', ask(text), tools)!;
      expect(bound).toBeGreaterThanOrEqual(Buffer.byteLength(renderChatML({ messages: ask(text) as any, tools })));
      expect(bound - b.bound('t1', ask('y'), tools)!).toBe(printedBytes(text) - 1);
    }
  });

  test('another template, system text, tool list or role order is another shape', async () => {
    const b = bounds();
    b.learn('t1', ask('Hello'), tools);
    await learned(b, 1);
    expect(b.bound('t1', ask('Hi'), tools)).toBeNumber();
    expect(b.bound('t2', ask('Hi'), tools)).toBeUndefined();
    expect(b.bound('t1', [{ role: 'system', content: 'You are Parley in study mode.' }, { role: 'user', content: 'Hi' }], tools)).toBeUndefined();
    expect(b.bound('t1', ask('Hi'), [])).toBeUndefined();
    expect(b.bound('t1', [...ask('Hi'), { role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Again' }], tools)).toBeUndefined();
  });

  test('a server that cannot render the shape leaves it unknown, asked again later', async () => {
    let fail = true;
    const b = createRequestBounds(async (messages) => (fail ? undefined : renderChatML({ messages: messages as any })));
    b.learn('t1', ask('Hello'), []);
    await Bun.sleep(400);
    expect(b.bound('t1', ask('Hello'), [])).toBeUndefined();
    fail = false;
    b.learn('t1', ask('Hello'), []);
    await Bun.sleep(400);
    expect(b.bound('t1', ask('Hello'), [])).toBeNumber();
  });

  test('what a text may take printed: its UTF-8 bytes, with JSON escapes counted', () => {
    expect(printedBytes('abc')).toBe(3);
    expect(printedBytes('"\\\n\t')).toBe(8);
    expect(printedBytes('\u0001')).toBe(6);
    expect(printedBytes('é你🐱')).toBe(2 + 3 + 4);
  });
});
