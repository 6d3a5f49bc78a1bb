import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { pgStore } from '../src/db/pg/store';
import { migratePg } from '../src/db/pg/migrate';
import { testConfig } from '../src/config';
import { createLifecycle } from '../src/lifecycle';
import { silentLogger } from '../src/log';
import { createLimits, STREAM_SLOT_MS } from '../src/http/shared-limits';
import { AppError } from '../src/http/errors';
import { postgresAvailable, startPostgres, type TestPostgres } from './support/postgres';

/**
 * The per-user limits on PostgreSQL hold across instances (src/http/shared-limits.ts): two
 * limit sets with different instance ids on one database stand for two instances.
 */
const run = postgresAvailable();

describe.if(run)('limits shared by the instances of a cluster', () => {
  let pg: TestPostgres;
  let sql: SQL;
  beforeAll(async () => {
    pg = await startPostgres();
    sql = new SQL({ url: pg.url, max: 4 });
    await migratePg(sql);
  }, 60_000);
  afterAll(async () => {
    await sql?.close();
    await pg?.stop();
  }, 60_000);

  const clock = { now: 1_764_000_000_000 };
  const instance = (id: string, config = {}) => {
    const lifecycle = createLifecycle();
    const limits = createLimits({ config: testConfig(config), now: () => clock.now, store: pgStore(sql), instanceId: id, lifecycle, log: silentLogger });
    return { limits, stop: () => lifecycle.shutdown(1000) };
  };
  const refusal = async (p: Promise<unknown> | unknown) => {
    try {
      await p;
      return undefined;
    } catch (err) {
      return err instanceof AppError ? { status: err.status, retryAfter: Number(err.headers?.['retry-after']) } : String(err);
    }
  };

  test('a user holds at most PARLEY_MAX_STREAMS_PER_USER streams on all instances together; a released or expired slot is free again', async () => {
    const a = instance('a', { maxStreamsPerUser: 2 });
    const b = instance('b', { maxStreamsPerUser: 2 });
    try {
      const first = await a.limits.acquireStream('ann');
      await b.limits.acquireStream('ann');
      expect(await refusal(a.limits.acquireStream('ann'))).toEqual({ status: 429, retryAfter: 5 });
      expect(await refusal(b.limits.acquireStream('ann'))).toEqual({ status: 429, retryAfter: 5 });
      // Someone else is not counted with ann.
      expect(await refusal(b.limits.acquireStream('bob'))).toBeUndefined();
      first();
      for (let i = 0; i < 50 && (await refusal(b.limits.acquireStream('ann'))); i++) await Bun.sleep(10);
      expect(await refusal(a.limits.acquireStream('ann'))).toEqual({ status: 429, retryAfter: 5 });
      // An instance that died: its slots stop counting once they expire.
      clock.now += STREAM_SLOT_MS + 1;
      expect(await refusal(a.limits.acquireStream('ann'))).toBeUndefined();
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  test('streams opened at the same moment through several instances cannot pass the cap together', async () => {
    const all = ['a', 'b', 'c'].map((id) => instance(id, { maxStreamsPerUser: 3 }));
    try {
      const outcomes = await Promise.all(Array.from({ length: 9 }, (_, i) => refusal(all[i % 3]!.limits.acquireStream('cat'))));
      expect(outcomes.filter((o) => o === undefined)).toHaveLength(3);
      expect(outcomes.filter((o) => o !== undefined).every((o) => (o as { status: number }).status === 429)).toBe(true);
    } finally {
      for (const i of all) await i.stop();
    }
  });

  test('a rate limit is one bucket for all instances, refilled with time, with the wait in Retry-After', async () => {
    const a = instance('a', { rateLimitWrite: { capacity: 3, perMs: 60_000 } });
    const b = instance('b', { rateLimitWrite: { capacity: 3, perMs: 60_000 } });
    try {
      const take = (i: typeof a) => refusal(i.limits.take('dan', 'groupChat/sendGroupMessage', 'write'));
      expect(await Promise.all([take(a), take(b), take(a)])).toEqual([undefined, undefined, undefined]);
      expect(await take(b)).toEqual({ status: 429, retryAfter: 20 });
      // Another operation has its own bucket.
      expect(await refusal(a.limits.take('dan', 'chat/renameConversation', 'write'))).toBeUndefined();
      clock.now += 20_000;
      expect(await take(a)).toBeUndefined();
      expect(await take(b)).toEqual({ status: 429, retryAfter: 20 });
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
