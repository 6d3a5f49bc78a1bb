import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import fc from 'fast-check';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { operations } from '../src/app';
import { compileInput } from '../src/http/body';
import { createTestContext, seedUser, ENVELOPE_KEYS, type TestUser } from './helpers';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/server';
import { testConfig } from '../src/config';
import { silentLogger } from '../src/log';
import { badBodyArb, fixedBadBodies, heavyBadBodies, type RawBody } from './support/schema-arb';
import { snapshotDb } from './support/db-snapshot';

// Shared machines can be slow; a generous ceiling only turns a hang into a failure.
setDefaultTimeout(60_000);

/**
 * Bad input, generated from each operation's own input schema so that operations added later are
 * covered without a line here: whatever the body, the answer is a 2xx only when the body is a
 * valid input, otherwise a 4xx envelope with exactly five keys, never a 5xx, and a rejected
 * request writes nothing. The server answers health checks afterwards.
 */

const RUNS_PER_OPERATION = 30;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Would Parley accept this body as valid input? (the same rules as src/http/body.ts, from outside) */
function isValidInput(check: (v: unknown) => boolean, raw: RawBody): boolean {
  // A non-empty body needs a JSON content type; a string body without one goes out as text/plain.
  const nonEmpty = raw.body !== '' && raw.body !== undefined && !(raw.body instanceof Uint8Array && raw.body.byteLength === 0);
  if (nonEmpty && !(raw.contentType && /^application\/json\s*(;|$)/i.test(raw.contentType))) return false;
  let text = '';
  try {
    text = raw.body === undefined ? '' : typeof raw.body === 'string' ? raw.body : utf8.decode(raw.body);
    // A string body goes out as UTF-8; decoding it the way the server does (BOM stripped)
    if (typeof raw.body === 'string') text = utf8.decode(new TextEncoder().encode(raw.body));
  } catch {
    return false;
  }
  if (text.trim() === '') return check({});
  try {
    return check(JSON.parse(text));
  } catch {
    return false;
  }
}

const T0 = Date.parse('2026-06-01T12:00:00.000Z');

describe('bad input, for every operation', () => {
  // A configured provider, so the sign-in routes run their real code paths.
  const ctx = createTestContext({ users: [{ email: 'ann@example.org' }], now: () => T0, config: { oauthGithubClientId: 'id', oauthGithubClientSecret: 'secret' } });
  const ann = ctx.users[0] as TestUser;

  const send = (path: string, raw: RawBody) =>
    ctx.app.handle(
      new Request(`http://localhost/api/${path}`, {
        method: 'POST',
        headers: { 'x-api-key': ann.key, ...(raw.contentType ? { 'content-type': raw.contentType } : {}) },
        body: raw.body,
      }),
    );

  for (const op of operations) {
    test(`${op.path}: 4xx envelope or valid input, never 5xx, no partial write`, async () => {
      const strict = compileInput(op.input).schema;
      const compiled = TypeCompiler.Compile(strict as TSchema);
      const check = (v: unknown) => compiled.Check(v);
      await ctx.call('auth/getSession', {}, ann); // stamp last-used once, outside the comparisons

      const probe = async (raw: RawBody) => {
        const before = snapshotDb(ctx.db);
        const res = await send(op.path, raw);
        const valid = isValidInput(check, raw);
        const label = `${op.path} ← ${raw.kind}`;
        expect({ label, serverError: res.status >= 500 }).toEqual({ label, serverError: false });
        if (res.status < 300) {
          expect({ label, acceptedInvalid: !valid }).toEqual({ label, acceptedInvalid: false });
          await res.body?.cancel();
          return;
        }
        expect({ label, status: res.status >= 400 && res.status < 500 }).toEqual({ label, status: true });
        const body = (await res.json()) as Record<string, unknown>;
        expect(Object.keys(body).sort()).toEqual([...ENVELOPE_KEYS]);
        expect(body.status).toBe(res.status);
        expect(typeof body.code).toBe('string');
        expect(typeof body.message).toBe('string');
        expect({ label, changed: JSON.stringify(snapshotDb(ctx.db)) !== JSON.stringify(before) }).toEqual({ label, changed: false });
      };

      for (const raw of op === operations[0] ? [...fixedBadBodies, ...heavyBadBodies] : fixedBadBodies) await probe(raw);
      await fc.assert(fc.asyncProperty(badBodyArb(strict as Record<string, unknown>), (raw) => probe(raw).then(() => true)), {
        numRuns: RUNS_PER_OPERATION,
        seed: 7,
      });
      const health = await ctx.app.handle(new Request('http://localhost/api/health'));
      expect(health.status).toBe(200);
    });
  }

  test('through the real server: bad bodies never get a 5xx, and the server keeps answering', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-bad-input-'));
    const server = await startServer(testConfig({ dataDir, port: 0 }), silentLogger);
    try {
      const user = seedUser(server.deps.db, { email: 'ann@example.org' }, server.deps.config);
      // Every body over a real socket to one operation; a sample to the others (in-process runs cover them all).
      const sample = fixedBadBodies.filter((b) => ['invalid UTF-8', 'truncated JSON', 'form body'].includes(b.kind));
      for (const op of operations)
        for (const raw of op === operations[0] ? [...fixedBadBodies, ...heavyBadBodies] : sample) {
          const res = await fetch(`${server.url}/api/${op.path}`, {
            method: 'POST',
            headers: { 'x-api-key': user.key, ...(raw.contentType ? { 'content-type': raw.contentType } : {}) },
            body: raw.body,
          });
          const label = `${op.path} ← ${raw.kind}`;
          expect({ label, serverError: res.status >= 500 }).toEqual({ label, serverError: false });
          await res.body?.cancel();
        }
      expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  test('any method, path and query string (including the non-operation routes): never a 5xx, errors are envelopes', async () => {
    const segment = fc.oneof(
      fc.constantFrom('api', 'auth', 'oauth', 'github', 'callback', 'preferences', 'get', 'health', 'docs', 'openapi.json', '..', '%2e%2e', '%00', '%E0%A4%A'),
      fc.string({ unit: fc.constantFrom(...'abcXYZ019-_.~%'.split('')), maxLength: 12 }),
    );
    const query = fc.array(fc.tuple(fc.constantFrom('code', 'state', 'error', 'redirect', 'x'), fc.string({ maxLength: 30 })), { maxLength: 4 });
    const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD');
    await fc.assert(
      fc.asyncProperty(
        method,
        fc.oneof(
          fc.array(segment, { minLength: 1, maxLength: 5 }),
          segment.map((p) => ['auth', 'oauth', p]),
          segment.map((p) => ['auth', 'oauth', p, 'callback']),
          fc.constantFrom(['auth', 'oauth', 'github'], ['auth', 'oauth', 'github', 'callback']),
        ),
        query,
        async (m, segs, q) => {
        const qs = q.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
        const url = `http://localhost/api/${segs.join('/')}${qs ? `?${qs}` : ''}`;
        const res = await ctx.app.handle(new Request(url, { method: m, headers: { 'x-api-key': ann.key, cookie: 'oauth_state=github:abc' } }));
        expect({ url, m, serverError: res.status >= 500 }).toEqual({ url, m, serverError: false });
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        if (res.status >= 400 && res.headers.get('content-type')?.startsWith('application/json')) {
          const body = (await res.json()) as Record<string, unknown>;
          expect(Object.keys(body).sort()).toEqual([...ENVELOPE_KEYS]);
        } else await res.body?.cancel();
        },
      ),
      { numRuns: 200, seed: 5 },
    );
  });
});
