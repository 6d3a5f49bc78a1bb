import { describe, expect, test } from 'bun:test';
import { createTestContext, type TestContext } from './helpers';
import { groupWith, send, subscribe } from './group-helpers';
import { attachGroupRelay } from '../src/groups/group-events';
import { createClusterBus, type ClusterBus } from '../src/pubsub/cluster-bus';
import type { BusTransport } from '../src/pubsub/transport';

/**
 * Group events across instances (src/groups/group-events.ts, `attachGroupRelay`): two apps on one
 * database stand for two instances, their cluster buses joined by a transport that holds what is
 * sent until the test lets it through, so messages can be made to arrive late.
 */
function heldHub() {
  const receivers: ((payload: string) => void)[] = [];
  const gaps: (() => void)[] = [];
  const held: { from: number; payload: string }[] = [];
  let next = 0;
  const transport = (): BusTransport => {
    const me = next++;
    return {
      maxPayloadBytes: 7_800,
      async start(onPayload, onGap) {
        receivers[me] = onPayload;
        gaps[me] = onGap;
      },
      async send(payload) {
        held.push({ from: me, payload });
      },
      async close() {},
    };
  };
  return {
    transport,
    /** Let through what `from` sent, to every other bus. */
    release(from: number) {
      for (const h of held.splice(0).filter((h) => h.from === from || (held.push(h), false)))
        receivers.forEach((r, i) => i !== h.from && r(h.payload));
    },
    /** Lose what is held, and tell every bus of the gap. */
    lose() {
      held.splice(0);
      gaps.forEach((g) => g());
    },
  };
}

async function twoInstances() {
  const hub = heldHub();
  const buses: ClusterBus[] = [hub.transport(), hub.transport()].map((t, i) => createClusterBus(t, { instanceId: `i${i}` }));
  await Promise.all(buses.map((b) => b.start()));
  const a = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], deps: { bus: buses[0]!, instanceId: 'i0' } });
  const b = await createTestContext({ sameDatabaseAs: a, deps: { bus: buses[1]!, instanceId: 'i1' } });
  b.users.push(...a.users);
  // As the server does (src/server.ts): after a gap, the groups followed here read what they missed.
  const relays = [attachGroupRelay(a.deps, buses[0]!), attachGroupRelay(b.deps, buses[1]!)];
  buses.forEach((bus, i) => bus.onGap(() => relays[i]!.catchUp()));
  return { hub, a, b };
}

const contents = async (sse: Awaited<ReturnType<typeof subscribe>>, n: number) => {
  const out: string[] = [];
  while (out.length < n) {
    const f = await sse.next();
    if (f.data?.type === 'message.created') out.push(f.data.message.content);
  }
  return out;
};

describe('group events across instances', () => {
  test("an instance's own message waits for an earlier one stored by another instance and still on its way", async () => {
    const { hub, a, b } = await twoInstances();
    const [ann, bob] = a.users as [TestContext['users'][0], TestContext['users'][0]];
    const group = await groupWith(a, ann, [bob]);
    hub.release(0);
    const onB = await subscribe(b, bob, group.id);
    // One through A (its message to B held back), then one through B.
    await send(a, ann, group.id, 'first, through A');
    await send(b, bob, group.id, 'second, through B');
    // B delivers neither out of order: the second waits while the first is read from the database.
    expect(await contents(onB, 2)).toEqual(['first, through A', 'second, through B']);
    // A's message arriving now is not sent again.
    hub.release(0);
    await send(b, bob, group.id, 'third, through B');
    expect(await contents(onB, 1)).toEqual(['third, through B']);
  });

  test('messages from the other instance reach the stream once each, in order; those lost on the way are read after the gap', async () => {
    const { hub, a, b } = await twoInstances();
    const [ann, bob] = a.users as [TestContext['users'][0], TestContext['users'][0]];
    const group = await groupWith(a, ann, [bob]);
    hub.release(0);
    const onB = await subscribe(b, bob, group.id);
    for (const m of ['one', 'two', 'three']) await send(a, ann, group.id, m);
    hub.release(0);
    expect(await contents(onB, 3)).toEqual(['one', 'two', 'three']);
    await send(a, ann, group.id, 'lost on the way');
    hub.lose();
    expect(await contents(onB, 1)).toEqual(['lost on the way']);
  });
});
