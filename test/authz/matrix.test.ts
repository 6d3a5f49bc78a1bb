import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import fc from 'fast-check';
import { operations } from '../../src/app';
import { compileInput } from '../../src/http/body';
import { createSession, revokeApiKey, revokeSession } from '../../src/auth/auth.store';
import { DAY_MS } from '../../src/time';
import { createTestContext, captureLog, bearer, cookie, seedUser, ENVELOPE_KEYS, SPEC_ERRORS, type TestContext, type TestUser } from '../helpers';
import { sampleValid } from '../support/schema-arb';
import { snapshotDb } from '../support/db-snapshot';
import { authzCases } from './cases';

// Shared machines can be slow; a generous ceiling only turns a hang into a failure.
setDefaultTimeout(60_000);

/**
 * The authorisation matrix, generated from the route table: every operation × every kind of bad
 * credential → 401, and × another user's resource → the row's status. Each denied request must
 * leave the database exactly as it was and put no secret in the log.
 */

const T0 = Date.parse('2026-06-01T12:00:00.000Z');

interface World {
  ctx: TestContext;
  lines: string[];
  caller: TestUser;
  owner: TestUser;
  /** Credentials that must all answer 401. */
  bad: { name: string; headers: Record<string, string> }[];
  secrets: string[];
}

async function buildWorld(): Promise<World> {
  const { log, lines } = captureLog();
  const ctx = await createTestContext({ users: [{ email: 'caller@example.org' }, { email: 'owner@example.org' }], log, now: () => T0 });
  const [caller, owner] = ctx.users as [TestUser, TestUser];
  const revoked = await seedUser(ctx.store, { email: 'revoked@example.org' }, ctx.deps.config);
  await ctx.store.write((tx) => revokeApiKey(tx, revoked.keyId, undefined, T0 - 1000));
  const expired = await ctx.store.write((tx) => createSession(tx, caller.user.id, DAY_MS, {}, T0 - 2 * DAY_MS));
  const signedOut = await seedUser(ctx.store, { email: 'signedout@example.org' }, ctx.deps.config);
  await ctx.store.write((tx) => revokeSession(tx, signedOut.sessionId, T0 - 1000));
  const unknownKey = 'pk_' + 'A'.repeat(43);
  const unknownToken = 'ps_' + 'B'.repeat(43);
  return {
    ctx,
    lines,
    caller,
    owner,
    bad: [
      { name: 'no credential', headers: {} },
      { name: 'unknown API key', headers: { 'x-api-key': unknownKey } },
      { name: 'unknown bearer token', headers: { authorization: `Bearer ${unknownToken}` } },
      { name: 'unknown session cookie', headers: { cookie: `parley_session=${unknownToken}` } },
      { name: 'revoked API key', headers: { 'x-api-key': revoked.key } },
      { name: 'expired session (bearer)', headers: { authorization: `Bearer ${expired.token}` } },
      { name: 'expired session (cookie)', headers: { cookie: `parley_session=${expired.token}` } },
      { name: 'signed-out session', headers: bearer(signedOut) },
      { name: 'malformed cookie escape', headers: { cookie: 'parley_session=%E0%A4%A' } },
      { name: 'empty bearer', headers: { authorization: 'Bearer ' } },
      { name: 'basic auth', headers: { authorization: 'Basic YTpi' } },
      { name: 'huge API key', headers: { 'x-api-key': 'pk_' + 'x'.repeat(8000) } },
      { name: 'blank API key', headers: { 'x-api-key': '   ' } },
      { name: 'session token as API key', headers: { 'x-api-key': caller.token } },
      { name: 'API key as bearer token', headers: { authorization: `Bearer ${caller.key}` } },
    ],
    secrets: [caller.key, caller.token, owner.key, owner.token, revoked.key, expired.token, signedOut.token, signedOut.key, unknownKey, unknownToken],
  };
}

const world = await buildWorld();

async function readBody(res: Response) {
  const text = await res.text();
  return text ? JSON.parse(text) : undefined;
}

describe('authorisation matrix', () => {
  test('every operation has a row in test/authz/cases.ts, and every row names an operation', () => {
    const paths: string[] = operations.map((op) => op.path);
    const missing = paths.filter((p) => !(p in authzCases));
    expect(missing, `add a row to test/authz/cases.ts for: ${missing.join(', ')}`).toEqual([]);
    const stale = Object.keys(authzCases).filter((p) => !paths.includes(p));
    expect(stale, `rows for operations that no longer exist: ${stale.join(', ')}`).toEqual([]);
  });

  for (const op of operations) {
    const isPublic = (op as { public?: boolean }).public === true;
    if (isPublic || authzCases[op.path]?.kind === 'public') {
      test(`${op.path}: public, and its row says so`, async () => {
        expect({ path: op.path, public: isPublic }).toEqual({ path: op.path, public: authzCases[op.path]?.kind === 'public' });
        // A public operation answers any caller, with or without a (bad) credential, without a 5xx.
        for (const { name, headers } of world.bad) {
          const res = await world.ctx.call(op.path, sampleValid(compileInput(op.input).schema), headers);
          expect({ credential: name, status: res.status < 500 && res.status !== 401 }).toEqual({ credential: name, status: true });
          await res.body?.cancel();
        }
      });
      continue;
    }
    test(`${op.path}: bad credentials → 401, nothing written`, async () => {
      const { ctx } = world;
      const body = sampleValid(compileInput(op.input).schema);
      const before = await snapshotDb(ctx.store);
      for (const { name, headers } of world.bad) {
        const res = await ctx.call(op.path, body, headers);
        const got = await readBody(res);
        expect({ credential: name, status: res.status }).toEqual({ credential: name, status: 401 });
        expect(Object.keys(got).sort()).toEqual([...ENVELOPE_KEYS]);
        expect(got).toEqual(SPEC_ERRORS[401]);
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      }
      expect(await snapshotDb(ctx.store)).toEqual(before);
    });

    const row = authzCases[op.path];
    if (row?.kind !== 'foreign') continue;
    test(`${op.path}: another user's resource → ${row.status}, nothing written`, async () => {
      const { ctx, caller, owner } = world;
      expect(op.errors ?? [], `${op.path} must list ${row.status} in its errors`).toContain(row.status);
      const input = await row.setup({ ctx, owner, caller });
      // Warm up: the first use of a credential stamps last-used; that write is not the one under test.
      for (const as of [caller, bearer(caller), cookie(caller)]) await ctx.call('auth/getSession', {}, as);
      const before = await snapshotDb(ctx.store);
      for (const as of [caller, bearer(caller), cookie(caller)]) {
        const res = await ctx.call(op.path, input, as);
        expect(res.status).toBe(row.status);
        expect(await readBody(res)).toEqual(SPEC_ERRORS[row.status]);
      }
      expect(await snapshotDb(ctx.store)).toEqual(before);
    });
  }

  test('arbitrary credential headers: always the 401 envelope, never a 5xx', async () => {
    const { ctx } = world;
    const header = fc.constantFrom('x-api-key', 'authorization', 'cookie');
    // Printable ASCII, including %-escapes, quotes, semicolons and '=' (header values must be bytes).
    const value = fc.oneof(
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 }),
      fc.tuple(fc.string({ maxLength: 20 }), fc.boolean()).map(([s, broken]) => `parley_session=${encodeURIComponent(s)}${broken ? '%E0%A' : ''}`),
      fc.string({ maxLength: 20 }).map((s) => `Bearer ${s.replace(/[^\x20-\x7e]/g, '')}`),
    );
    await fc.assert(
      fc.asyncProperty(header, value, async (name, v) => {
        const res = await ctx.call('preferences/get', {}, { [name]: v });
        const body = await readBody(res);
        expect({ name, v, status: res.status }).toEqual({ name, v, status: 401 });
        expect(body).toEqual(SPEC_ERRORS[401]);
      }),
      { numRuns: 150, seed: 11 },
    );
  });

  test('no secret of any kind reached the log while the matrix ran', async () => {
    await Bun.sleep(10); // request lines are written after the response
    const all = world.lines.join('\n');
    expect(world.lines.length).toBeGreaterThan(operations.length);
    for (const secret of world.secrets) expect(all).not.toContain(secret);
  });
});
