import { describe, expect, test } from 'bun:test';
import { createTestContext, type TestUser } from './helpers';
import { groupWith, send, subscribe } from './group-helpers';
import { mentionsAssistant } from '../src/groups/group-assistant';

function setup(config = {}) {
  const ctx = createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }], config });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob };
}

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

  test('with no provider: the message is kept and subscribers learn why no answer comes', async () => {
    const { ctx, ann, bob } = setup();
    const g = await groupWith(ctx, ann, [bob]);
    const s = await subscribe(ctx, bob, g.id);
    const msg = await send(ctx, ann, g.id, '@ai what is the capital of France?');
    expect((await s.nextData()).data).toEqual({ type: 'message.created', message: msg });
    const started = await s.nextData();
    expect(started.id).toBeUndefined();
    expect(started.data).toEqual({ type: 'assistant.started', replyTo: msg.id });
    const failed = await s.nextData();
    expect(failed.id).toBeDefined();
    expect(failed.data).toEqual({ type: 'assistant.failed', replyTo: msg.id, reason: 'no_provider', message: expect.any(String) });
    const page = (await ctx.json('groupChat/listMessages', { groupChatId: g.id }, bob)).body;
    expect(page.messages).toEqual([msg]);
    await s.close();
  });

  test('no follow-up without a mention, or when intelligent responses are off', async () => {
    const { ctx, ann } = setup({ aiHandle: 'helper' });
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
