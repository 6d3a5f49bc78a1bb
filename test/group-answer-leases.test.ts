import { afterAll, describe, expect, test } from 'bun:test';
import { createTestContext } from './helpers';
import { groupWith, send } from './group-helpers';
import { keepGroupAnswers } from '../src/groups/group-assistant';
import { findLease, tryAcquireLease } from '../src/tasks/lease.store';
import { listGroupEventsAfter } from '../src/groups/group-events.store';
import { startFakeOpenAI } from './fakes/openai';

/**
 * A group answer is held by the instance writing it (src/groups/group-assistant.ts): when that
 * instance stops renewing it, another ends it with `assistant.failed`, reason `interrupted`.
 */
const openai = startFakeOpenAI();
afterAll(() => openai.stop());
const config = { aiProvider: 'openai-chat' as const, aiBaseUrl: openai.url, aiModel: 'small' };

describe('group answers held through leases', () => {
  test('the instance writing an answer holds its lease until the answer is stored', async () => {
    openai.eventDelayMs = 30;
    openai.chatScript = () => ({ deltas: Array.from({ length: 10 }, (_, i) => ({ content: `w${i} ` })) });
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config });
    const ann = ctx.users[0]!;
    const group = await groupWith(ctx, ann);
    const asked = await send(ctx, ann, group.id, '@ai hello');
    const name = `group-answer:${group.id}:${asked.id}`;
    let held: string | undefined;
    for (let i = 0; i < 100 && !held; i++) {
      held = (await ctx.deps.store.read((tx) => findLease(tx, name)))?.holder;
      if (!held) await Bun.sleep(10);
    }
    expect(held).toBe(ctx.deps.instanceId);
    for (let i = 0; i < 200 && (await ctx.deps.store.read((tx) => findLease(tx, name))); i++) await Bun.sleep(20);
    expect(await ctx.deps.store.read((tx) => findLease(tx, name))).toBeUndefined();
    const events = await ctx.deps.store.read((tx) => listGroupEventsAfter(tx, group.id, 0));
    expect(events.map((e) => JSON.parse(e.data)).filter((d) => d.replyTo === asked.id).map((d) => d.type)).toEqual(['message.created']);
  });

  test("an answer whose instance stopped renewing it ends as interrupted, once, by whichever instance looks first", async () => {
    let now = 1_764_000_000_000;
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config, now: () => now });
    const ann = ctx.users[0]!;
    const group = await groupWith(ctx, ann);
    const asked = await send(ctx, ann, group.id, 'a question for an instance that then died');
    const name = `group-answer:${group.id}:${asked.id}`;
    await ctx.deps.store.write((tx) => tryAcquireLease(tx, name, 'an-instance-that-died', 15_000, now));
    // Still within its lease: nothing to end.
    expect(await keepGroupAnswers(ctx.deps)).toBe(0);
    now += 15_001;
    const other = await createTestContext({ sameDatabaseAs: ctx, config, now: () => now, deps: { instanceId: 'instance-b' } });
    expect((await Promise.all([keepGroupAnswers(ctx.deps), keepGroupAnswers(other.deps)])).reduce((a, b) => a + b)).toBe(1);
    const events = (await ctx.deps.store.read((tx) => listGroupEventsAfter(tx, group.id, 0))).map((e) => JSON.parse(e.data));
    expect(events.filter((d) => d.replyTo === asked.id)).toEqual([
      { type: 'assistant.failed', replyTo: asked.id, reason: 'interrupted', message: 'The server writing the answer stopped before it was finished. Ask again.' },
    ]);
    expect(await ctx.deps.store.read((tx) => findLease(tx, name))).toBeUndefined();
    expect(await keepGroupAnswers(ctx.deps)).toBe(0);
  });
});
