import { describe, expect, test } from 'bun:test';
import { createTestContext, captureLog, bearer, cookie, ENVELOPE_KEYS, SPEC_ERRORS } from './helpers';

const post = (body?: string | Uint8Array, headers: Record<string, string> = {}) =>
  new Request('http://localhost/api/preferences/get', { method: 'POST', body, headers });

describe('HTTP conventions', () => {
  test('every credential kind authenticates', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    for (const as of [ann, bearer(ann), cookie(ann)]) {
      const { status, body } = await ctx.json('auth/getSession', {}, as);
      expect(status).toBe(200);
      expect(body.user.email).toBe('ann@example.org');
    }
  });

  test('missing, unknown, malformed credentials → 401 envelope with exactly the five keys', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    for (const headers of [
      {} as Record<string, string>,
      { 'x-api-key': 'pk_nope' },
      { authorization: 'Bearer ps_nope' },
      { authorization: 'Basic abc' },
      { cookie: 'parley_session=ps_nope' },
    ]) {
      const { status, body } = await ctx.json('preferences/get', {}, headers);
      expect(status).toBe(401);
      expect(Object.keys(body).sort()).toEqual(ENVELOPE_KEYS);
      expect(body).toEqual(SPEC_ERRORS[401]);
    }
  });

  test('operations without input accept no body, an empty body and {}', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const key = ctx.users[0]!.key;
    for (const body of [undefined, '', '{}']) {
      const res = await ctx.app.handle(post(body, { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ enableMemories: false, showMemoryToolOutput: false });
    }
  });

  test('invalid input → 400 BAD_REQUEST with issues', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const { status, body } = await ctx.json('auth/revokeApiKey', { keyId: 42 }, ctx.users[0]);
    expect(status).toBe(400);
    expect(body).toEqual({
      defined: false,
      code: 'BAD_REQUEST',
      status: 400,
      message: 'Input validation failed',
      data: { issues: [{ path: ['keyId'], message: expect.any(String) }] },
    });
    const missing = await ctx.json('auth/revokeApiKey', {}, ctx.users[0]);
    expect(missing.body.data.issues[0].path).toEqual(['keyId']);
    // An unknown field is ignored (docs/api.md); a known one of the wrong type is not.
    const extra = await ctx.json('preferences/get', { surprise: 1 }, ctx.users[0]);
    expect(extra.status).toBe(200);
    const wrongBeside = await ctx.json('auth/revokeApiKey', { keyId: 42, surprise: 1 }, ctx.users[0]);
    expect(wrongBeside.body.data.issues.map((i: any) => i.path)).toEqual([['keyId']]);
  });

  test('malformed JSON, invalid UTF-8 and a wrong content type are 4xx envelopes', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const key = ctx.users[0]!.key;
    const bad = await ctx.app.handle(post('{"a":', { 'x-api-key': key, 'content-type': 'application/json' }));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ defined: false, code: 'BAD_REQUEST', status: 400 });
    const utf = await ctx.app.handle(post(new Uint8Array([0x7b, 0xff, 0x7d]), { 'x-api-key': key, 'content-type': 'application/json' }));
    expect(utf.status).toBe(400);
    expect(((await utf.json()) as any).message).toBe('Request body is not valid UTF-8');
    // Large bodies take another decoding path (src/http/body.ts): the same answers, and a BOM is
    // dropped the same way. Only operations that carry images read bodies that large.
    const large = (text: string) => new TextEncoder().encode(`\uFEFF{"message":"${text}","images":5}`);
    const postLarge = (body: Uint8Array) =>
      ctx.app.handle(new Request('http://localhost/api/chat/stream', { method: 'POST', body, headers: { 'x-api-key': key, 'content-type': 'application/json' } }));
    const bytes = large('é'.repeat(50_000));
    bytes[bytes.length - 20] = 0xff;
    const bigUtf = await postLarge(bytes);
    expect(bigUtf.status).toBe(400);
    expect(((await bigUtf.json()) as any).message).toBe('Request body is not valid UTF-8');
    // Decoded and parsed (a BOM left in would be malformed JSON): the field reaches validation.
    const bigOk = await postLarge(large('é'.repeat(50_000)));
    expect(((await bigOk.json()) as any).data.issues[0].path).toEqual(['images']);
    const type = await ctx.app.handle(post('a=1', { 'x-api-key': key, 'content-type': 'application/x-www-form-urlencoded' }));
    expect(type.status).toBe(415);
    expect(await type.json()).toMatchObject({ defined: false, code: 'UNSUPPORTED_MEDIA_TYPE', status: 415 });
    // No Content-Type at all (a browser's Blob body, sent without a preflight): refused and not run,
    // even with the session cookie. No body at all still reads as {}.
    const ann = ctx.users[0]!;
    const blob = await ctx.app.handle(
      new Request('http://localhost/api/preferences/update', { method: 'POST', headers: cookie(ann), body: new Blob(['{"enableMemories":true}']) }),
    );
    expect(blob.status).toBe(415);
    expect((await ctx.json('preferences/get', {}, ann)).body.enableMemories).toBe(false);
    expect((await ctx.app.handle(new Request('http://localhost/api/preferences/get', { method: 'POST', headers: { 'x-api-key': key } }))).status).toBe(200);
  });

  test('a body over the limit → 413 PAYLOAD_TOO_LARGE', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { maxBodyBytes: 2048 } });
    const big = JSON.stringify({ name: 'x'.repeat(4096) });
    const res = await ctx.app.handle(
      new Request('http://localhost/api/auth/createApiKey', {
        method: 'POST',
        body: big,
        headers: { 'x-api-key': ctx.users[0]!.key, 'content-type': 'application/json' },
      }),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ defined: false, code: 'PAYLOAD_TOO_LARGE', status: 413, message: 'Payload Too Large', data: {} });
  });

  test('unknown path → 404 envelope, wrong method → 405 envelope', async () => {
    const ctx = await createTestContext();
    const nf = await ctx.call('nope/nothing', {});
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual(SPEC_ERRORS[404]);
    const wm = await ctx.app.handle(new Request('http://localhost/api/preferences/get'));
    expect(wm.status).toBe(405);
    expect(wm.headers.get('allow')).toBe('POST');
    expect(await wm.json()).toEqual({ defined: false, code: 'METHOD_NOT_SUPPORTED', status: 405, message: 'Method Not Supported', data: {} });
    // The pages answer GET (and HEAD) only: another method is 405 there too.
    for (const page of ['/api/health', '/api/openapi.json', '/api/docs', '/api/auth/oauth/github', '/api/auth/oauth/github/callback']) {
      const res = await ctx.app.handle(new Request(`http://localhost${page}`, { method: 'POST' }));
      expect({ page, status: res.status, allow: res.headers.get('allow') }).toEqual({ page, status: 405, allow: 'GET, HEAD' });
    }
    expect((await ctx.app.handle(new Request('http://localhost/api/health', { method: 'HEAD' }))).status).toBe(200);
    expect((await ctx.app.handle(new Request('http://localhost/api/auth/oauth/github/elsewhere', { method: 'POST' }))).status).toBe(404);
  });

  test('routing does not depend on the host: short names, ports, IPv6 literals; an extra leading segment is 404', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const key = ctx.users[0]!.key;
    for (const host of ['a', 'pi', 'nas', 'a:1', 'pi:8787', 'parley.example.org', '[::1]', '[::1]:8787']) {
      const prefs = await ctx.app.handle(new Request(`http://${host}/api/preferences/get`, { method: 'POST', headers: { 'x-api-key': key } }));
      expect({ host, status: prefs.status }).toEqual({ host, status: 200 });
      const health = await ctx.app.handle(new Request(`http://${host}/api/health`));
      expect({ host, status: health.status }).toEqual({ host, status: 200 });
      for (const prefix of ['/x', '/xy', '/xyz']) {
        const confused = await ctx.app.handle(new Request(`http://${host}${prefix}/api/preferences/get`, { method: 'POST', headers: { 'x-api-key': key } }));
        expect({ host, prefix, status: confused.status }).toEqual({ host, prefix, status: 404 });
      }
    }
  });

  test('a client that leaves mid-upload → 499, logged as a request at info, not as an error', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], log });
    const leaving = new AbortController();
    // Half of the declared body arrives, then the connection is gone: the read fails as Bun's does.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"enableMemories":'));
        leaving.signal.addEventListener('abort', () => controller.error(new DOMException('The connection was closed.', 'AbortError')));
      },
    });
    const answered = ctx.app.handle(
      new Request('http://localhost/api/preferences/update', {
        method: 'POST',
        headers: { 'x-api-key': ctx.users[0]!.key, 'content-type': 'application/json', 'content-length': '36' },
        body,
        signal: leaving.signal,
      }),
    );
    await Bun.sleep(5);
    leaving.abort();
    const res = await answered;
    expect(res.status).toBe(499);
    expect(await res.json()).toEqual({ defined: false, code: 'CLIENT_CLOSED_REQUEST', status: 499, message: 'Client Closed Request', data: {} });
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged.filter((l) => l.level === 'error')).toEqual([]);
    expect(logged.filter((l) => l.msg === 'request').map((l) => [l.level, l.status])).toEqual([['info', 499]]);
  });

  test('an unexpected throw → 500 with the spec message, the cause only in the log with the request id', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], log });
    await ctx.dropTable('api_keys'); // make the store fail underneath the handler
    const res = await ctx.call('auth/getSession', {}, bearer(ctx.users[0]!));
    // getSession does not touch api_keys; listApiKeys does.
    expect(res.status).toBe(200);
    const broken = await ctx.call('auth/listApiKeys', {}, bearer(ctx.users[0]!));
    expect(broken.status).toBe(500);
    expect(await broken.json()).toEqual(SPEC_ERRORS[500]);
    const requestId = broken.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.level === 'error');
    expect(logged.requestId).toBe(requestId);
    expect(logged.cause).toContain('api_keys');
  });

  test('health, OpenAPI and docs are public; docs need no network', async () => {
    const ctx = await createTestContext();
    const health = await ctx.app.handle(new Request('http://localhost/api/health'));
    expect(health.status).toBe(200);
    const spec: any = await (await ctx.app.handle(new Request('http://localhost/api/openapi.json'))).json();
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.paths['/api/auth/revokeApiKey'].post.responses['403']).toBeDefined();
    expect(spec.paths['/api/auth/revokeApiKey'].post.requestBody.content['application/json'].schema.required).toEqual(['keyId']);
    const docs = await (await ctx.app.handle(new Request('http://localhost/api/docs'))).text();
    expect(docs).toContain('POST /api/auth/revokeApiKey');
    expect(docs).not.toMatch(/<script[^>]+src=|<link[^>]+href="http/);
    // Each operation lists each error status once, in order (some name 500 among their own).
    for (const [, list] of docs.matchAll(/Errors: ([\d, ]+) —/g)) {
      const statuses = list!.split(', ').map(Number);
      expect(statuses).toEqual([...new Set(statuses)].sort((a, b) => a - b));
    }
  });

  test('security headers on every response, and one request log line with no credential in it', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], log });
    const ann = ctx.users[0]!;
    const res = await ctx.call('preferences/get', {}, ann);
    await ctx.call('preferences/get', {}, bearer(ann));
    await ctx.call('preferences/get', {}, { 'x-api-key': 'pk_secret_wrong' });
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    await Bun.sleep(10); // request lines are written after the response is handed over
    const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requestLines).toHaveLength(3);
    expect(requestLines[0]).toMatchObject({ method: 'POST', path: '/api/preferences/get', status: 200 });
    expect(requestLines[2].status).toBe(401);
    const all = lines.join('\n');
    for (const secret of [ann.key, ann.token, 'pk_secret_wrong']) expect(all).not.toContain(secret);
  });
});
