import { afterAll, describe, expect, test } from 'bun:test';
import { createTestContext, type TestUser } from './helpers';
import { groupWith, send, subscribe } from './group-helpers';
import { runFollowUp } from '../src/groups/group-assistant';
import { mentionsAssistant } from '../src/groups/group-answerer';
import { findGroupById } from '../src/groups/group.store';
import { startFakeOpenAI, textEvents, webSearchEvents } from './fakes/openai';
import type { Config } from '../src/config';

const openai = startFakeOpenAI();
afterAll(() => openai.stop());

async function setup(config: Partial<Config> = {}) {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }], config });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob };
}
const withResponses: Partial<Config> = { aiProvider: 'openai-responses', aiBaseUrl: openai.url, aiApiKey: 'sk-test' };

describe('assistant follow-up', () => {
  test('the handle must stand as a word of its own', () => {
    expect(mentionsAssistant('@ai what is up', 'ai')).toBe(true);
    expect(mentionsAssistant('hey @AI, help', 'ai')).toBe(true);
    expect(mentionsAssistant('ask (@ai)', 'ai')).toBe(true);
    expect(mentionsAssistant('mail me at bob@ai.org', 'ai')).toBe(false);
    expect(mentionsAssistant('@aide is here', 'ai')).toBe(false);
    expect(mentionsAssistant('@ai-bot', 'ai')).toBe(false);
    expect(mentionsAssistant('no mention of ai', 'ai')).toBe(false);
    expect(mentionsAssistant('hi @helper', 'helper')).toBe(true);
  });

  test('answers in the group with the provider: progress live, then the assistant message with web_search_tool_call parts', async () => {
    openai.eventDelayMs = 0;
    openai.responsesScript = () => [...webSearchEvents('ws_1', 'weather paris', ['https://example.org/paris']), ...textEvents('Sunny in Paris, 21°C.')];
    const { ctx, ann, bob } = await setup(withResponses);
    const g = await groupWith(ctx, ann, [bob]);
    await send(ctx, bob, g.id, 'anyone in Paris?');
    const s = await subscribe(ctx, bob, g.id);
    const msg = await send(ctx, ann, g.id, '@ai what is the weather in Paris?');
    const frames = [];
    for (;;) {
      const f = await s.nextData(5000);
      frames.push(f);
      if (f.data.type === 'message.created' && f.data.message.role === 'assistant') break;
    }
    expect(frames.map((f) => f.data.type)).toEqual([
      'message.created',
      'assistant.started',
      'assistant.web_search.in_progress',
      'assistant.web_search.completed',
      'assistant.text.delta',
      'assistant.text.delta',
      'assistant.text.delta',
      'message.created',
    ]);
    const part = { type: 'web_search_tool_call', content: { query: 'weather paris', num_results: null, country: null, safe_search: null } };
    expect(frames[2]!.data).toEqual({ type: 'assistant.web_search.in_progress', replyTo: msg.id, itemId: 'ws_1', part });
    expect(frames[3]!.data).toEqual({ type: 'assistant.web_search.completed', replyTo: msg.id, itemId: 'ws_1', results: [{ link: 'https://example.org/paris', title: expect.any(String), snippet: '' }] });
    // Every frame has an id and ids increase: progress frames are `<seq>.<n>` after the user's message.
    const seq = Number(frames[0]!.id);
    expect(frames.slice(1, -1).map((f) => f.id)).toEqual([1, 2, 3, 4, 5, 6].map((n) => `${seq}.${n}`));
    const answer = frames.at(-1)!;
    expect(Number(answer.id)).toBe(seq + 1);
    expect(answer.data).toEqual({
      type: 'message.created',
      replyTo: msg.id,
      message: {
        id: expect.any(String),
        type: 'message',
        role: 'assistant',
        content: 'Sunny in Paris, 21°C.',
        parts: [part],
        sender: { id: 'assistant', name: 'ai', image: '' },
        createdAt: expect.any(String),
      },
    });
    // The answer is part of the group's history, and the model read that history with names.
    const page = (await ctx.json('groupChat/listMessages', { groupChatId: g.id }, ann)).body;
    expect(page.messages.map((m: any) => [m.role, m.content])).toEqual([
      ['user', 'anyone in Paris?'],
      ['user', '@ai what is the weather in Paris?'],
      ['assistant', 'Sunny in Paris, 21°C.'],
    ]);
    expect(page.messages[2].parts).toEqual([part]);
    const req = openai.requests.findLast((r) => r.path === 'POST /v1/responses')!.body;
    expect(req.instructions).toContain('@ai');
    expect(JSON.stringify(req.input)).toContain('Bob: anyone in Paris?');
    expect(JSON.stringify(req.input)).toContain('Ann: @ai what is the weather in Paris?');
    expect(req.tools).toEqual([{ type: 'web_search_preview' }]);
    await s.close();
    // A client that dropped mid-answer resumes from a progress id and gets the finished answer.
    const resumed = await subscribe(ctx, bob, g.id, `${seq}.3`);
    expect(await resumed.nextData()).toEqual(answer);
    await resumed.close();
  });

  test('on a Chat Completions server: one system message, members speaking in a row sent as one user turn naming each', async () => {
    openai.chatScript = () => ({ deltas: [{ content: 'On it.' }] });
    const { ctx, ann, bob } = await setup({ aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiApiKey: 'none' });
    const g = await groupWith(ctx, ann, [bob]);
    const s = await subscribe(ctx, ann, g.id);
    await send(ctx, ann, g.id, 'shall we go to Lyon?');
    await send(ctx, bob, g.id, 'or Nice');
    await send(ctx, ann, g.id, '@ai which is warmer in May?');
    for (;;) {
      const f = await s.nextData(5000);
      if (f.data.type === 'message.created' && f.data.message.role === 'assistant') break;
    }
    await s.close();
    const req = openai.requests.findLast((r) => r.path === 'POST /v1/chat/completions')!.body;
    expect(req.messages.map((m: any) => m.role)).toEqual(['system', 'user']);
    expect(req.messages[0].content).toContain('@ai');
    expect(req.messages[1].content).toBe('Ann: shall we go to Lyon?\n\nBob: or Nice\n\nAnn: @ai which is warmer in May?');
  });

  test('when the provider fails: the message is kept and subscribers get assistant.failed', async () => {
    openai.responsesScript = () => ({ fail: 500 });
    const { ctx, ann } = await setup(withResponses);
    const g = await groupWith(ctx, ann);
    const s = await subscribe(ctx, ann, g.id);
    const msg = await send(ctx, ann, g.id, '@ai hello?');
    expect((await s.nextData()).data).toEqual({ type: 'message.created', message: msg });
    expect((await s.nextData()).data).toEqual({ type: 'assistant.started', replyTo: msg.id });
    const failed = await s.nextData(10_000);
    expect(failed.id).toBeDefined();
    expect(failed.data).toEqual({ type: 'assistant.failed', replyTo: msg.id, reason: 'provider_error', message: expect.any(String) });
    expect((await ctx.json('groupChat/listMessages', { groupChatId: g.id }, ann)).body.messages).toEqual([msg]);
    await s.close();
  }, 20_000);

  test('with no provider: the message is kept and subscribers learn why no answer comes', async () => {
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const s = await subscribe(ctx, bob, g.id);
    const msg = await send(ctx, ann, g.id, '@ai what is the capital of France?');
    const created = await s.nextData();
    expect(created.data).toEqual({ type: 'message.created', message: msg });
    const started = await s.nextData();
    expect(started.id).toBe(`${created.id}.1`);
    expect(started.data).toEqual({ type: 'assistant.started', replyTo: msg.id });
    const failed = await s.nextData();
    expect(failed.id).toBe(String(Number(created.id) + 1));
    expect(failed.data).toEqual({ type: 'assistant.failed', replyTo: msg.id, reason: 'no_provider', message: expect.any(String) });
    const page = (await ctx.json('groupChat/listMessages', { groupChatId: g.id }, bob)).body;
    expect(page.messages).toEqual([msg]);
    await s.close();
  });

  test('an answer on an app that has published nothing for the group yet numbers its progress after the stored events', async () => {
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const msg = await send(ctx, ann, g.id, 'before the restart');
    // The same database, a fresh app (a restarted server): no progress counter for the group.
    const later = await createTestContext({ sameDatabaseAs: ctx });
    const s = await subscribe(later, bob, g.id);
    const group = (await ctx.store.read((tx) => findGroupById(tx, g.id)))!;
    await runFollowUp(later.deps, group, msg);
    const started = await s.nextData();
    expect([started.id, started.data.type]).toEqual([`${group.lastSeq}.1`, 'assistant.started']);
    const failed = await s.nextData();
    expect([failed.id, failed.data.type]).toEqual([String(group.lastSeq + 1), 'assistant.failed']);
    await s.close();
  });

  test('no follow-up without a mention, or when intelligent responses are off', async () => {
    const { ctx, ann } = await setup({ aiHandle: 'helper' });
    const g = await groupWith(ctx, ann);
    const s = await subscribe(ctx, ann, g.id);
    await send(ctx, ann, g.id, '@ai is not my name');
    expect((await s.nextData()).data.type).toBe('message.created');
    await ctx.json('groupChat/setIntelligentResponses', { groupChatId: g.id, enabled: false }, ann);
    expect((await s.nextData()).data.type).toBe('group.updated');
    await send(ctx, ann, g.id, '@helper are you there?');
    const last = await send(ctx, ann, g.id, 'fine');
    expect((await s.nextData()).data.message.content).toBe('@helper are you there?');
    // Had a follow-up started, its events would come before this message.
    expect((await s.nextData()).data.message).toEqual(last);
    await s.close();
  });
});
