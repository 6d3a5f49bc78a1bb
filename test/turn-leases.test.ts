import { afterAll, describe, expect, test } from 'bun:test';
import { createTestContext, type TestContext } from './helpers';
import { SseReader } from './sse';
import { startFakeOpenAI } from './fakes/openai';
import { findResponseById } from '../src/chat/response.store';
import { findLease } from '../src/tasks/lease.store';
import { cancelResponse, resumeInterruptedResponses, RESTART_MESSAGE } from '../src/chat/respond';
import { LEASE_LOST_REASON, TURN_LEASE_MS, turnLeaseName } from '../src/chat/turn-leases';
import { startTurnKeeper } from '../src/chat/turn-keeper';
import { createMemoryBus } from '../src/pubsub/bus';

/**
 * Who runs an AI turn when several instances share a database (src/chat/turn-leases.ts): two
 * apps on one database stand for two instances; they share a bus as a cluster's instances do.
 */
const openai = startFakeOpenAI();
afterAll(() => openai.stop());

const config = { aiProvider: 'openai-chat' as const, aiBaseUrl: openai.url, aiModel: 'small', researchModel: 'small' };
/** A slow answer: 40 deltas, 50 ms apart. */
const slow = () => ({ deltas: Array.from({ length: 40 }, (_, i) => ({ content: `w${i} ` })) });

async function twoInstances(clock: { now: number }) {
  const bus = createMemoryBus();
  const now = () => clock.now;
  const a = await createTestContext({ users: [{ email: 'ann@example.org' }], config, now, deps: { bus, instanceId: 'instance-a' } });
  const b = await createTestContext({ sameDatabaseAs: a, config, now, deps: { bus, instanceId: 'instance-b' } });
  return { a, b };
}

async function startTurn(ctx: TestContext) {
  const reader = new SseReader(await ctx.call('chat/stream', { message: 'Hi' }, ctx.users[0]));
  const opening = await reader.all(2);
  return { reader, responseId: opening[1]!.data.responseId as string };
}

describe('turn leases', () => {
  test('the instance that starts a turn holds its lease until the turn ends, then lets it go', async () => {
    openai.eventDelayMs = 0;
    openai.chatScript = () => ({ deltas: [{ content: 'Hello' }] });
    const clock = { now: Date.now() };
    const { a } = await twoInstances(clock);
    const { reader, responseId } = await startTurn(a);
    expect((await a.store.read((tx) => findLease(tx, turnLeaseName(responseId))))?.holder).toBe('instance-a');
    expect((await reader.all()).at(-1)!.data.type).toBe('done');
    expect(await a.store.read((tx) => findLease(tx, turnLeaseName(responseId)))).toBeUndefined();
  });

  test("a dead instance's turn is taken over once its lease expires, not before, and by one instance only", async () => {
    openai.eventDelayMs = 50;
    openai.chatScript = slow;
    const clock = { now: Date.now() };
    const { a, b } = await twoInstances(clock);
    const { reader, responseId } = await startTurn(a);
    await reader.all(3);
    // Instance A dies: its task stops without ending the row, and nobody renews its lease.
    await a.deps.tasks.cancel(responseId, LEASE_LOST_REASON);
    expect(await resumeInterruptedResponses(b.deps, 'orphan')).toEqual({ resumed: 0, failed: 0 });
    clock.now += TURN_LEASE_MS + 1;
    // Both look for orphans at once: one takes the turn.
    const taken = await Promise.all([resumeInterruptedResponses(b.deps, 'orphan'), resumeInterruptedResponses(a.deps, 'orphan')]);
    expect(taken.reduce((n, t) => n + t.failed + t.resumed, 0)).toBe(1);
    const row = (await a.store.read((tx) => findResponseById(tx, responseId)))!;
    // Chat Completions cannot be resumed: it ends as a restart does.
    expect([row.status, row.error]).toEqual(['failed', RESTART_MESSAGE]);
    expect(await a.store.read((tx) => findLease(tx, turnLeaseName(responseId)))).toBeUndefined();
    const rest = await reader.all();
    expect(rest.at(-1)!.data).toEqual({ type: 'error', message: RESTART_MESSAGE });
  }, 15_000);

  test('a cancel asked on another instance stops the turn where it runs', async () => {
    openai.eventDelayMs = 50;
    openai.chatScript = slow;
    const clock = { now: Date.now() };
    const { a, b } = await twoInstances(clock);
    const stopKeeper = startTurnKeeper(a.deps, { renewMs: 60_000, sweepMs: 60_000 });
    try {
      const { reader, responseId } = await startTurn(a);
      await reader.all(3);
      const row = (await b.store.read((tx) => findResponseById(tx, responseId)))!;
      await cancelResponse(b.deps, row);
      expect((await b.store.read((tx) => findResponseById(tx, responseId)))!.status).toBe('cancelled');
      expect((await reader.all()).at(-1)!.data).toEqual({ type: 'error', message: 'The response was cancelled.' });
    } finally {
      stopKeeper();
    }
  }, 15_000);

  test('a task whose lease could not be renewed stops without ending its row', async () => {
    openai.eventDelayMs = 50;
    openai.chatScript = slow;
    const clock = { now: Date.now() };
    const { a } = await twoInstances(clock);
    const { reader, responseId } = await startTurn(a);
    await reader.all(3);
    // The lease expired meanwhile (the database was out of reach): the renewal finds it gone.
    clock.now += TURN_LEASE_MS + 1;
    const stopKeeper = startTurnKeeper(a.deps, { renewMs: 20, sweepMs: 20 });
    const status = async () => (await a.store.read((tx) => findResponseById(tx, responseId)))!.status;
    try {
      for (let i = 0; i < 100 && a.deps.tasks.isRunning(responseId); i++) await Bun.sleep(5);
      expect(a.deps.tasks.isRunning(responseId)).toBe(false);
      // The task did not end the row (that would say "cancelled"): the keeper's look for orphans
      // claims it like any instance's, and ends it as a restart does.
      for (let i = 0; i < 100 && (await status()) === 'in_progress'; i++) await Bun.sleep(20);
    } finally {
      stopKeeper();
    }
    expect((await reader.all()).at(-1)!.data).toEqual({ type: 'error', message: RESTART_MESSAGE });
  }, 15_000);
});
