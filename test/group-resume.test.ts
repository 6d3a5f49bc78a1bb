import { afterAll, describe, expect, test } from 'bun:test';
import { createTestContext, type TestUser } from './helpers';
import { groupWith, send, subscribe } from './group-helpers';
import { startFakeOpenAI } from './fakes/openai';
import type { Frame, SseReader } from './group-sse';

/**
 * docs/realtime.md, "Resume": a client that reconnects with `Last-Event-ID` in the middle of an
 * assistant answer gets the deltas it missed, then the live ones, each once and in order.
 */

const openai = startFakeOpenAI();
afterAll(() => openai.stop());

const DELTAS = Array.from({ length: 30 }, (_, i) => `w${i} `);

async function setup() {
  const ctx = await createTestContext({
    users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }],
    config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small' },
  });
  return { ctx, ann: ctx.users[0] as TestUser, bob: ctx.users[1] as TestUser };
}

/** The frames up to and including the assistant's message, then the stream closed. */
async function untilAnswer(sse: SseReader): Promise<(Frame & { data: any })[]> {
  const got: (Frame & { data: any })[] = [];
  for (;;) {
    const f = await sse.nextData(5000);
    got.push(f);
    if (f.data.type === 'message.created' && f.data.message.role === 'assistant') break;
  }
  await sse.close();
  return got;
}

describe('group resume mid-answer', () => {
  test('reconnecting from a delta id replays the deltas in between, then the live ones: every delta once, in order', async () => {
    openai.chatScript = () => ({ deltas: DELTAS.map((content) => ({ content })) });
    // A slow model: the client leaves and comes back while it is still writing.
    openai.eventDelayMs = 20;
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const first = await subscribe(ctx, bob, g.id);
    await send(ctx, ann, g.id, '@ai say thirty words');
    const seen: (Frame & { data: any })[] = [];
    while (seen.filter((f) => f.data.type === 'assistant.text.delta').length < 5) seen.push(await first.nextData(5000));
    const lastId = seen.at(-1)!.id!;
    await first.close();
    // Deltas go out while nobody of Bob's listens.
    await Bun.sleep(150);
    const again = await subscribe(ctx, bob, g.id, lastId);
    const rest = await untilAnswer(again);
    openai.eventDelayMs = 0;
    const deltas = [...seen, ...rest].filter((f) => f.data.type === 'assistant.text.delta');
    expect(deltas.map((f) => f.data.delta)).toEqual(DELTAS);
    // Ids keep increasing across the reconnect: nothing repeated, nothing skipped.
    const ids = [...seen, ...rest].map((f) => f.id!);
    expect(new Set(ids).size).toBe(ids.length);
    expect(rest.at(-1)!.data.message.content).toBe(DELTAS.join(''));
  });

  test('reconnecting from the durable id before the answer replays the whole answer so far; a finished answer is not replayed as deltas', async () => {
    openai.chatScript = () => ({ deltas: DELTAS.slice(0, 10).map((content) => ({ content })) });
    openai.eventDelayMs = 20;
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const first = await subscribe(ctx, bob, g.id);
    await send(ctx, ann, g.id, '@ai ten words');
    const question = await first.nextData(5000);
    expect(question.data.type).toBe('message.created');
    await first.nextData(5000);
    await first.nextData(5000);
    await first.close();
    const again = await subscribe(ctx, bob, g.id, question.id);
    const rest = await untilAnswer(again);
    openai.eventDelayMs = 0;
    expect(rest.filter((f) => f.data.type === 'assistant.text.delta').map((f) => f.data.delta)).toEqual(DELTAS.slice(0, 10));
    // Once the answer is stored, a resume from before it gets the message, not its deltas.
    const later = await subscribe(ctx, bob, g.id, question.id);
    expect((await later.nextData(5000)).data).toMatchObject({ type: 'message.created', message: { role: 'assistant' } });
    await later.close();
  });
});
