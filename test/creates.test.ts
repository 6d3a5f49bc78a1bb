import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { operations } from '../src/app';
import { settings } from '../src/config';
import { createTestContext, type TestUser } from './helpers';
import { creates, NOT_CREATING } from './support/creates';

// Every operation that creates rows for the caller is bounded (issue 30, item 7): the table of
// them is test/support/creates.ts. Many requests each; shared machines can be slow.
setDefaultTimeout(60_000);

const CAP = 3;

describe('what a user creates is bounded', () => {
  test('every operation is classified, creating or not (the admin ones excepted): a new one must say how it is bounded', () => {
    const unclassified = operations.filter((op) => !op.admin && !(op.path in creates) && !NOT_CREATING.has(op.path)).map((op) => op.path);
    expect(unclassified).toEqual([]);
    const both = operations.filter((op) => op.path in creates && NOT_CREATING.has(op.path)).map((op) => op.path);
    expect(both).toEqual([]);
    const gone = [...Object.keys(creates), ...NOT_CREATING].filter((path) => !operations.some((op) => op.path === path));
    expect(gone).toEqual([]);
  });

  test('every create is under a rate limit: the AI one for AI turns, the write one for the rest', () => {
    const limits = Object.keys(creates).map((path) => [path, operations.find((op) => op.path === path)!.rateLimit]);
    expect(Object.fromEntries(limits)).toEqual(Object.fromEntries(Object.keys(creates).map((path) => [path, path.startsWith('chat/stream') ? 'ai' : 'write'])));
  });

  for (const [path, bound] of Object.entries(creates)) {
    if (bound.kind === 'bounded') continue;
    const env = settings[bound.cap].env;

    test(`${path}: at ${env} one more is ${bound.kind === 'cap' ? 'a 409 naming it, nothing written' : 'taken, and the oldest goes'}`, async () => {
      const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { [bound.cap]: CAP, rateLimitWrite: undefined } });
      const ann = ctx.users[0] as TestUser;
      const room = CAP - (await bound.held(ctx, ann));
      const inputs = await bound.inputs(ctx, ann, room + 2);
      const statuses = [];
      for (const input of inputs) {
        const res = await ctx.json(path, input, ann);
        statuses.push(res.status);
        if (res.status === 409) {
          expect(res.body.data).toEqual({ reason: 'cap', cap: env, max: CAP });
          expect(res.body.message).toContain(env);
        }
      }
      const taken = Array(room).fill(200);
      expect(statuses).toEqual(bound.kind === 'cap' ? [...taken, 409, 409] : [...taken, 200, 200]);
      expect(await bound.held(ctx, ann)).toBe(CAP);
    });

    test(`${path}: under the write rate limit (past it, 429 and nothing written)`, async () => {
      const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { rateLimitWrite: { capacity: 2, perMs: 60_000 } } });
      const ann = ctx.users[0] as TestUser;
      const before = await bound.held(ctx, ann);
      const statuses = [];
      for (const input of await bound.inputs(ctx, ann, 3)) {
        const res = await ctx.call(path, input, ann);
        statuses.push(res.status);
        if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        await res.body?.cancel();
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(await bound.held(ctx, ann)).toBe(before + 2);
    });
  }
});
