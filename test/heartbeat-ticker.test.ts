import { describe, expect, test } from 'bun:test';
import { createTestContext, type TestUser } from './helpers';
import { groupWith, send, subscribe } from './group-helpers';
import type { Frame } from './group-sse';

async function setup(config = {}) {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }], config });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob };
}

const heartbeats = (frames: Frame[]) => frames.filter((f) => f.comment === 'heartbeat').length;

describe('shared heartbeat ticker', () => {
  test('a quiet stream gets heartbeats; a busy stream gets none while busy, then one once quiet', async () => {
    const { ctx, ann } = await setup({ sseHeartbeatSeconds: 1 });
    const quietGroup = await groupWith(ctx, ann, [], 'Quiet');
    const busyGroup = await groupWith(ctx, ann, [], 'Busy');
    const quiet = await subscribe(ctx, ann, quietGroup.id);
    const busy = await subscribe(ctx, ann, busyGroup.id);
    expect(ctx.deps.heartbeats.size).toBe(2);

    // A message every 250 ms for 3.2 s: more than three ticks, never a quiet interval.
    const busyFrames: Frame[] = [];
    const until = Date.now() + 3200;
    let sent = 0;
    while (Date.now() < until) {
      await send(ctx, ann, busyGroup.id, `m${sent++}`);
      for (;;) {
        const f = await busy.next(1000);
        busyFrames.push(f);
        if (f.data) break;
      }
      await Bun.sleep(250);
    }
    expect(busyFrames.filter((f) => f.data).length).toBe(sent);
    expect(heartbeats(busyFrames)).toBe(0);

    // The quiet stream beat meanwhile (ticks at ~1, 2, 3 s; the first only marks it quiet).
    const quietFrames: Frame[] = [];
    for (;;) {
      const f = await quiet.next(50).catch(() => undefined);
      if (!f) break;
      quietFrames.push(f);
    }
    expect(quietFrames.length).toBeGreaterThan(0);
    expect(heartbeats(quietFrames)).toBe(quietFrames.length);

    // Once the busy stream goes quiet it is beaten too: it is still registered.
    expect(await busy.next(3500)).toEqual({ comment: 'heartbeat' });
    await quiet.close();
    await busy.close();
  }, 15_000);

  test('the ticker holds no stream once streams close, end server-side, or the app shuts down', async () => {
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const a1 = await subscribe(ctx, ann, g.id);
    const a2 = await subscribe(ctx, ann, g.id);
    const b = await subscribe(ctx, bob, g.id);
    expect(ctx.deps.heartbeats.size).toBe(3);

    // The client goes away.
    await a1.close();
    await Bun.sleep(5);
    expect(ctx.deps.heartbeats.size).toBe(2);

    // The server ends the stream: Bob leaves the group.
    await ctx.json('groupChat/leaveGroup', { groupChatId: g.id }, bob);
    await expect(b.take(5, 1000)).rejects.toThrow('stream ended');
    expect(ctx.deps.heartbeats.size).toBe(1);

    // Shutdown: the last stream gets its final frame and the ticker is emptied and stopped.
    await ctx.deps.lifecycle.shutdown(1000);
    expect(ctx.deps.heartbeats.size).toBe(0);
    await a2.close();
    expect(ctx.deps.heartbeats.size).toBe(0);
  });
});
