import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import fc from 'fast-check';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { operations } from '../src/app';
import { compileInput } from '../src/http/body';
import { createTestContext, seedUser, ENVELOPE_KEYS, type TestUser, serverDatabase } from './helpers';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/server';
import { testConfig } from '../src/config';
import { silentLogger } from '../src/log';
import { badBodyArb, fixedBadBodies, heavyBadBodies, validArb, type RawBody } from './support/schema-arb';
import { snapshotDb } from './support/db-snapshot';
import { rawRequest } from './support/raw-http';
import { AppError } from '../src/http/errors';
import { bodyLimitOf } from '../src/http/operation';
import { checkJsonShape, JSON_MAX_DEPTH, JSON_MAX_KEY_BYTES, JSON_MAX_VALUES } from '../src/http/check-json-shape';
import { costlyJsonArb, measureJson } from './support/costly-json';
import { createEchoApp, nodesOf, operationInputs, setPath, withUnknownFields, type Node } from './support/input-walk';
import { conforms } from './support/documented-fields';
import { addressRows, rowOf } from '../src/net/address';
import { creates } from './support/creates';

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

// A configured provider, so the sign-in routes run their real code paths.
const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], now: () => T0, config: { oauthGithubClientId: 'id', oauthGithubClientSecret: 'secret', publicUrl: 'http://localhost' } });
const ann = ctx.users[0] as TestUser;

describe('bad input, for every operation', () => {
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
        const before = await snapshotDb(ctx.store);
        const res = await send(op.path, raw);
        const valid = isValidInput(check, raw);
        const label = `${op.path} ← ${raw.kind}`;
        // A valid input to a feature this server has not set up (voice without its servers, in
        // this context) is a 503 naming the settings: the server's state, no failure of the input's handling.
        const unconfigured = valid && res.status === 503;
        expect({ label, serverError: res.status >= 500 && !unconfigured }).toEqual({ label, serverError: false });
        if (res.status < 300) {
          expect({ label, acceptedInvalid: !valid }).toEqual({ label, acceptedInvalid: false });
          await res.body?.cancel();
          return;
        }
        expect({ label, status: (res.status >= 400 && res.status < 500) || unconfigured }).toEqual({ label, status: true });
        const body = (await res.json()) as Record<string, unknown>;
        expect(Object.keys(body).sort()).toEqual([...ENVELOPE_KEYS]);
        expect(body.status).toBe(res.status);
        expect(typeof body.code).toBe('string');
        expect(typeof body.message).toBe('string');
        expect({ label, changed: JSON.stringify(await snapshotDb(ctx.store)) !== JSON.stringify(before) }).toEqual({ label, changed: false });
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
    const server = await startServer(testConfig({ ...(await serverDatabase()), dataDir, port: 0 }), silentLogger);
    try {
      const user = await seedUser(server.deps.store, { email: 'ann@example.org' }, server.deps.config);
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

/** RFC 3986 `host [":" port]`: an IP literal, or a reg-name (unreserved, %-escapes, sub-delims). */
const RFC3986_HOST = /^(?:\[[0-9a-f:.]+\]|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?$/i;

describe('bad input: the Host header', () => {
  /**
   * Hosts of any form over a real socket (fetch() takes the Host from the URL): names of any
   * length with or without a port, IP literals, nothing, and strings that are no host at all.
   * A request is routed by its path whatever the Host: the answer is the one `Host: localhost`
   * gets, or, for a Host that is no host name, a 400 envelope. Never a 5xx, never a route that
   * the path does not name.
   */
  const name = fc.string({ unit: fc.constantFrom(...'abcxyz019.-'.split('')), minLength: 1, maxLength: 12 });
  const port = fc.integer({ min: 0, max: 99999 }).map((p) => `:${p}`);
  const wellFormed = fc.oneof(
    fc.tuple(name, fc.option(port, { nil: '' })).map(([n, p]) => n + p),
    fc.tuple(fc.constantFrom('[::1]', '[fe80::1]', '[2001:db8::8787]', '127.0.0.1', '192.168.1.10'), fc.option(port, { nil: '' })).map(([h, p]) => h + p),
  );
  // Anything a header line can carry (no CR or LF): spaces, quotes, brackets, `|`, `%`, non-ASCII, a bad port.
  const anything = fc.string({ unit: fc.constantFrom(...'ab1.:-[]@/?#%|<>" \\^{}_~é'.split('')), maxLength: 15 });
  const host = fc.oneof({ arbitrary: wellFormed, weight: 3 }, { arbitrary: anything, weight: 2 }, { arbitrary: fc.constant(null), weight: 1 });

  const routes = [
    ...operations.map((op) => ({ method: 'POST', path: `/api/${op.path}` })),
    ...['/api/health', '/api/openapi.json', '/api/docs', '/api/auth/oauth/github', '/api/auth/oauth/github/callback'].map((path) => ({ method: 'GET', path })),
  ];
  const route = fc.tuple(fc.constantFrom(...routes), fc.constantFrom('', '', '/x', '/xy', '/api')).map(([r, prefix]) => ({ ...r, path: prefix + r.path, prefixed: prefix !== '' }));

  test('any Host (any length, port, IP literal, none, garbage) on any route: routed by the path alone, never a 5xx', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-bad-host-'));
    const server = await startServer(testConfig({ ...(await serverDatabase()), dataDir, port: 0, oauthGithubClientId: 'id', oauthGithubClientSecret: 'secret', publicUrl: 'http://localhost' }), silentLogger);
    try {
      const send = (r: { method: string; path: string }, h: string | null) =>
        rawRequest(server.port, [`${r.method} ${r.path} HTTP/1.${h === null ? 0 : 1}`, ...(h === null ? [] : [`Host: ${h}`]), 'Content-Length: 0'].join('\r\n'));
      const baseline = new Map<string, number>();
      const expected = async (r: { method: string; path: string }) => {
        if (!baseline.has(r.path)) baseline.set(r.path, (await send(r, 'localhost')).status);
        return baseline.get(r.path)!;
      };
      await fc.assert(
        fc.asyncProperty(route, host, async (r, h) => {
          const res = await send(r, h);
          const want = r.prefixed ? 404 : await expected(r);
          const label = { host: h, method: r.method, path: r.path };
          expect({ ...label, serverError: res.status >= 500 }).toEqual({ ...label, serverError: false });
          // A host by RFC 3986 that a URL can carry (or none): exactly the answer `localhost` gets.
          if (h === null || (RFC3986_HOST.test(h) && URL.canParse(`http://${h}/`))) expect({ ...label, status: res.status }).toEqual({ ...label, status: want });
          else expect({ ...label, status: [want, 400].includes(res.status) }).toEqual({ ...label, status: true });
          expect(res.headers.get('x-content-type-options')).toBe('nosniff');
          if (res.status >= 400 && res.headers.get('content-type')?.startsWith('application/json'))
            expect(Object.keys(JSON.parse(res.body)).sort()).toEqual([...ENVELOPE_KEYS]);
        }),
        { numRuns: 400, seed: 19 },
      );
      expect((await send({ method: 'GET', path: '/api/health' }, 'pi')).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('bad input: costly JSON shapes', () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  const overBounds = (value: unknown) => {
    const m = measureJson(value);
    return m.depth > JSON_MAX_DEPTH || m.values > JSON_MAX_VALUES || m.longestKey > JSON_MAX_KEY_BYTES;
  };

  test('the shape check refuses a body exactly when its parse would pass a bound, whatever its strings hold and however it is indented', () => {
    fc.assert(
      fc.property(costlyJsonArb, fc.constantFrom(undefined, 0, 1, '\t', ' \r\n'), (value, indent) => {
        const text = JSON.stringify(value, null, indent as string | number | undefined);
        let refused: unknown = false;
        try {
          checkJsonShape(encode(text));
        } catch (err) {
          refused = err instanceof AppError ? err.status : err;
        }
        const shape = measureJson(value);
        expect({ shape, refused }).toEqual({ shape, refused: overBounds(value) ? 413 : false });
      }),
      { numRuns: 300, seed: 11 },
    );
  });

  test('in place of the body or of a field of a valid body, to any operation: 413 past a bound or the operation\'s limit, otherwise never 413, never a 5xx', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const config = ctx.deps.config;
    // JSON bodies: an upload row answers any JSON with 415 before reading it (src/http/upload.ts).
    const cases = fc.constantFrom(...operations.filter((op) => !op.upload)).chain((op) => {
      const schema = compileInput(op.input).schema as Node;
      const fields = nodesOf(schema).filter((n) => n.path.length === 1 && typeof n.path[0] === 'string');
      return fc.tuple(fc.constant(op), costlyJsonArb, validArb(schema), fields.length ? fc.option(fc.constantFrom(...fields.map((f) => f.path))) : fc.constant(null));
    });
    await fc.assert(
      fc.asyncProperty(cases, async ([op, shape, valid, path]) => {
        const value = path ? setPath(valid, path, shape) : shape;
        const text = JSON.stringify(value);
        const res = await ctx.call(op.path, text, ctx.users[0]);
        const label = `${op.path} ← ${path ? path.join('.') : 'body'} (${text.length} bytes)`;
        const mustRefuse = overBounds(value) || Buffer.byteLength(text) > bodyLimitOf(op, config);
        expect({ label, serverError: res.status >= 500, tooLarge: res.status === 413 }).toEqual({ label, serverError: false, tooLarge: mustRefuse });
        if (res.status >= 400) expect(Object.keys((await res.json()) as object).sort()).toEqual([...ENVELOPE_KEYS]);
        else await res.body?.cancel();
      }),
      { numRuns: 120, seed: 12 },
    );
    expect((await ctx.app.handle(new Request('http://localhost/api/health'))).status).toBe(200);
  });
});

describe('bad input: unknown fields', () => {
  /** Names no input uses, prototype names among them. */
  const knownNames = new Set(operationInputs.flatMap(({ schema }) => nodesOf(schema).flatMap((n) => n.path.filter((p): p is string => typeof p === 'string'))));
  const name = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'isAdmin', 'userId'), fc.string({ minLength: 1, maxLength: 12 })).filter((n) => !knownNames.has(n));
  /** Own properties, `__proto__` included (an object literal would set the prototype instead). */
  const extraFields = fc.array(fc.tuple(name, fc.jsonValue({ maxDepth: 2 })), { minLength: 1, maxLength: 4 }).map((pairs) => {
    const extra: Record<string, unknown> = {};
    for (const [k, v] of pairs) Object.defineProperty(extra, k, { value: v, enumerable: true, writable: true, configurable: true });
    return extra;
  });

  test('every operation: any unknown fields, with any JSON values, in every object of a valid input, are accepted and never reach the handler', async () => {
    const echo = createEchoApp(await createTestContext({ users: [{ email: 'ann@example.org' }] }));
    for (const { op, schema } of operationInputs)
      await fc.assert(
        fc.asyncProperty(validArb(schema), extraFields, async (value, extra) => {
          const res = await echo(op.path, JSON.stringify(withUnknownFields(schema, value, extra)));
          const label = `${op.path} + ${JSON.stringify(Object.keys(extra))}`;
          const received = res.status === 200 ? JSON.stringify(((await res.json()) as { input: unknown }).input) : `status ${res.status}`;
          expect({ label, received }).toEqual({ label, received: JSON.stringify(value) });
        }),
        { numRuns: 15, seed: 13 },
      );
  });
});

describe('bad input: string-typed numbers', () => {
  /** The numeric fields of every operation (a union that also takes strings, like `after`, is not one). */
  const numericFields = operationInputs.flatMap(({ op, schema }) =>
    nodesOf(schema)
      .filter(({ node, path }) => (node.type === 'integer' || node.type === 'number') && !nodesOf(schema).some((n) => n.path.join('.') === path.join('.') && n.node.anyOf?.some((b: Node) => b.type === 'string')))
      .map(({ node, path }) => ({ op, schema, node, path })),
  );
  const numberText = fc.oneof(
    fc.integer().map(String),
    fc.double({ noNaN: true }).map(String),
    fc.constantFrom('0', '1', '-1', '1e3', ' 5', '5 ', '0x10', '', 'NaN', 'Infinity', '١'),
  );
  const number = fc.oneof(fc.integer({ min: -1_000, max: 1_000 }), fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constantFrom(0, 1, 100, 101, 200, 201, 1.5, -0, 1e21));

  test('every numeric field: a number written as a string is a 400 naming the field; a number passes exactly when its documented schema allows it', async () => {
    expect(numericFields.length).toBeGreaterThanOrEqual(3);
    const echo = createEchoApp(await createTestContext({ users: [{ email: 'ann@example.org' }] }));
    for (const { op, schema, node, path } of numericFields)
      await fc.assert(
        fc.asyncProperty(validArb(schema), fc.oneof(numberText, number), async (valid, given) => {
          const res = await echo(op.path, JSON.stringify(setPath(valid, path, given)));
          const body = (await res.json()) as any;
          const label = `${op.path} ${path.join('.')} = ${JSON.stringify(given)}`;
          const named = res.status === 400 && body.data.issues.some((i: any) => i.path.join('.') === path.join('.'));
          expect({ label, status: res.status, named }).toEqual({ label, ...(typeof given !== 'string' && conforms(node, given) ? { status: 200, named: false } : { status: 400, named: true }) });
        }),
        { numRuns: 40, seed: 14 },
      );
  });
});

describe('bad input: image URLs into the operator\'s network', () => {
  // Every range IANA's special-purpose registries call not globally reachable (src/net/iana/),
  // in the spellings a model server would connect to: the literal, IPv4-mapped, NAT64.
  // (::ffff:0:0/96 is a spelling of IPv4 addresses, judged by them: the `mapped` spelling below.)
  const blockedRows = addressRows.filter((r) => r.reachable !== 'True' && r.block !== '::ffff:0:0/96');
  const hostArb = fc.tuple(fc.constantFrom(...blockedRows), fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), fc.constantFrom('plain', 'mapped', 'nat64')).map(([row, r, spelling]) => {
    const width = row.family === 4 ? 32 : 128;
    const size = 1n << BigInt(width - row.bits);
    const n = ((row.base >> BigInt(width - row.bits)) << BigInt(width - row.bits)) + (r % size);
    const v4 = (x: bigint) => [24n, 16n, 8n, 0n].map((s) => Number((x >> s) & 255n)).join('.');
    const v6 = (x: bigint) => Array.from({ length: 8 }, (_, i) => ((x >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
    const host = row.family === 6 ? `[${v6(n)}]` : spelling === 'mapped' ? `[::ffff:${v4(n)}]` : spelling === 'nat64' ? `[64:ff9b::${v4(n)}]` : v4(n);
    return { row: row.block, host, reachable: rowOf(row.family, n)?.reachable === 'True' };
  });

  test('chat/stream with an image at any address of any range not globally reachable: 400 naming the field, before any stream', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { rateLimitAi: { capacity: 100_000, perMs: 1000 } } });
    const ann = ctx.users[0]!;
    await fc.assert(
      fc.asyncProperty(hostArb, async ({ row, host, reachable }) => {
        // A more specific row may make this address reachable (192.0.0.9 inside 192.0.0.0/24).
        fc.pre(!reachable);
        const res = await ctx.json('chat/stream', { message: 'What is this?', images: [{ imageUrl: `https://${host}/latest/meta-data/x.png` }] }, ann);
        expect({ row, host, status: res.status, path: res.body?.data?.issues?.[0]?.path }).toEqual({ row, host, status: 400, path: ['images', 0, 'imageUrl'] });
      }),
      { numRuns: 200 },
    );
  });
});

describe('bad input: oversized widget messages', () => {
  /** Objects of any keys and values (multi-byte text, escapes, numbers) around the message cap. */
  const CAP = 2048;
  const text = fc
    .tuple(fc.string({ unit: fc.constantFrom('a', 'é', '€', '𝄞', '"', '\\', '\n', '\u0000'), minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 400 }))
    .map(([piece, n]) => piece.repeat(n));
  const data = fc.dictionary(fc.string({ maxLength: 20 }), fc.oneof(text, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.array(text, { maxLength: 3 })), { maxKeys: 4 });

  test('widget/addThreadMessage: 200 exactly when the JSON of `data` fits PARLEY_WIDGET_MESSAGE_MAX_BYTES; otherwise 413 naming it, never a 5xx, nothing stored', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { widgetMessageMaxBytes: CAP, rateLimitWrite: undefined, widgetThreadMaxMessages: 10_000 } });
    const [ann] = ctx.users as [TestUser];
    const { createConversation } = await import('../src/chat/conversation.store');
    const { createWidget } = await import('../src/widgets/widget.store');
    const conversation = await ctx.store.write((tx) => createConversation(tx, { ownerId: ann.user.id }));
    const widget = await ctx.store.write((tx) => createWidget(tx, { conversationId: conversation.id, responseId: 'r', widgetType: 'canvas' }, Date.now()));
    const threadId = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.thread.id;
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(data, fc.constantFrom(undefined, 0, 2), async (value, indent) => {
        const bytes = Buffer.byteLength(JSON.stringify(value));
        const res = await ctx.json('widget/addThreadMessage', JSON.stringify({ threadId, data: value }, null, indent), ann);
        const label = { bytes, body: JSON.stringify({ threadId, data: value }, null, indent).length };
        if (res.status === 200) stored++;
        expect({ ...label, status: res.status }).toEqual({ ...label, status: bytes <= CAP ? 200 : 413 });
        if (res.status === 413) expect(res.body.data).toEqual({ reason: 'cap', cap: 'PARLEY_WIDGET_MESSAGE_MAX_BYTES', max: CAP });
        expect(await ctx.count('widget_thread_messages')).toBe(stored);
      }),
      { numRuns: 150, seed: 30 },
    );
    expect(stored).toBeGreaterThan(10);
    expect(stored).toBeLessThan(140);
  });
});

describe('bad input: create floods', () => {
  const CAP = 5;

  for (const [path, bound] of Object.entries(creates)) {
    if (bound.kind === 'bounded') continue;
    test(`${path}: 40 at once against a cap of ${CAP} and a bucket of 20: only 200, 409 or 429 envelopes, never a 5xx, and the cap holds exactly`, async () => {
      const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { [bound.cap]: CAP, rateLimitWrite: { capacity: 20, perMs: 3_600_000 } } });
      const ann = ctx.users[0] as TestUser;
      const room = CAP - (await bound.held(ctx, ann));
      const answers = await Promise.all((await bound.inputs(ctx, ann, 40)).map((input) => ctx.json(path, input, ann)));
      const statuses = answers.map((a) => a.status);
      for (const a of answers.filter((a) => a.status !== 200)) expect(Object.keys(a.body).sort()).toEqual([...ENVELOPE_KEYS]);
      expect({ path, others: statuses.filter((s) => ![200, 409, 429].includes(s)) }).toEqual({ path, others: [] });
      expect(statuses.filter((s) => s === 429)).toHaveLength(20);
      expect(statuses.filter((s) => s === 200)).toHaveLength(bound.kind === 'cap' ? room : 20);
      expect(await bound.held(ctx, ann)).toBe(CAP);
    });
  }
});

describe('bad input: uploads', () => {
  /** Characters a client may put in a part's file name: path separators, controls, bidi and invisible format characters, joiners, the rest of Unicode. */
  const nameChar = fc.constantFrom('a', 'Z', '.', ' ', '/', '\\', '\u0000', '\u0007', '\u0085', '\u202e', '\u202a', '\u2066', '\u2069', '\u200e', '\u061c', '\u200b', '\u2060', '\ufeff', '\u00ad', '\u2028', '\u{e0041}', '\u200c', '\u200d', 'é', 'ß', '東', '😀');
  const part = fc.record({
    isFile: fc.boolean(),
    name: fc.constantFrom('file', 'other', 'FILE', 'file '),
    filename: fc.string({ unit: nameChar, minLength: 1, maxLength: 12 }),
    content: fc.string({ maxLength: 40 }),
  });
  const UNSAFE_IN_NAME = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}/\\]/u;

  test("files/upload, any parts under any names with any file names: 200 only for one file part named \"file\" with content, else a 4xx envelope and nothing kept; a kept name carries no control, invisible format character or path", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-bad-upload-'));
    const up = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { dataDir, rateLimitWrite: undefined } });
    const user = up.users[0] as TestUser;
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 3 }), async (parts) => {
        const form = new FormData();
        for (const p of parts) {
          if (p.isFile) form.append(p.name, new Blob([p.content]), p.filename);
          else form.append(p.name, p.content);
        }
        const files = await up.count('files');
        const res = await up.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': user.key }, body: form }));
        const body = (await res.json()) as any;
        const fileParts = parts.filter((p) => p.isFile);
        const valid = fileParts.length === 1 && fileParts[0]!.name === 'file' && fileParts[0]!.content !== '';
        const label = JSON.stringify(parts);
        expect({ label, taken: res.status === 200 }).toEqual({ label, taken: valid });
        if (res.status === 200) {
          expect({ label, unsafe: UNSAFE_IN_NAME.test(body.filename), empty: body.filename === '' }).toEqual({ label, unsafe: false, empty: false });
          return;
        }
        expect({ label, client: res.status >= 400 && res.status < 500 }).toEqual({ label, client: true });
        expect(Object.keys(body).sort()).toEqual([...ENVELOPE_KEYS]);
        expect(await up.count('files')).toBe(files);
      }),
      { numRuns: 60, seed: 30 },
    );
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("uploads with the session cookie, any Origin and Sec-Fetch-Site: only this server's own origin, same-origin or unsaid, gets past 403; refused before a byte is read", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-bad-upload-'));
    const up = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { dataDir, rateLimitWrite: undefined, rateLimitAi: undefined } });
    const user = up.users[0] as TestUser;
    const origin = fc.constantFrom(undefined, 'http://localhost', 'null', 'https://localhost', 'http://localhost:8080', 'http://evil.example', 'http://sub.localhost', '');
    const site = fc.constantFrom(undefined, 'same-origin', 'same-site', 'cross-site', 'none', 'garbage');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('files/upload', 'audio/transcribe'), origin, site, async (path, o, s) => {
        let read = 0;
        const boundary = 'b0undary';
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            const piece = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="n.txt"\r\n\r\nnotes\r\n--${boundary}--\r\n`);
            read += piece.length;
            controller.enqueue(piece);
            controller.close();
          },
        }, { highWaterMark: 0 });
        const headers: Record<string, string> = { cookie: `parley_session=${user.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` };
        if (o !== undefined) headers.origin = o;
        if (s !== undefined) headers['sec-fetch-site'] = s;
        const res = await up.app.handle(new Request(`http://localhost/api/${path}`, { method: 'POST', headers, body, duplex: 'half' } as RequestInit));
        const own = o === 'http://localhost' && (s === undefined || s === 'same-origin');
        const label = `${path} origin=${o} site=${s}`;
        // Past the check: the upload is taken (200), or transcription is not set up here (503).
        expect({ label, status: res.status }).toEqual({ label, status: own ? (path === 'files/upload' ? 200 : 503) : 403 });
        if (!own) expect({ label, read }).toEqual({ label, read: 0 });
        await res.body?.cancel();
      }),
      { numRuns: 80, seed: 31 },
    );
    rmSync(dataDir, { recursive: true, force: true });
  });
});
