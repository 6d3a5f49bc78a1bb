import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { buildBinaryOnce } from './build-binary';
import { waitForListening } from '../scripts/lib/wait-for-listening';
import { abandonUpload, rawRequest, type RawResponse } from './support/raw-http';
import { ENVELOPE_KEYS } from './helpers';
import { MCP_CLIENT_METADATA_PATH } from '../src/mcp/mcp-oauth.routes';

// These tests spawn the binary and send a few thousand requests to it; shared machines can be
// slow, and no test here asserts on time.
setDefaultTimeout(120_000);

/**
 * Requests written by hand over sockets to the compiled binary: Host headers fetch() cannot send
 * (it takes the Host from the URL), statuses and headers walked from the served OpenAPI document,
 * and an upload cut off half-way.
 */

/** Hosts of every length from 1 to 12 (`Host: pi`, `nas`...: names on a home network), with and without a port, and IPv6 literals. */
const HOSTS = [
  ...Array.from({ length: 12 }, (_, i) => 'parley.lan.x'.slice(0, i + 1)).flatMap((h) => [h, `${h}:8787`]),
  '[::1]',
  '[::1]:8787',
];

/** Above the 1 MB the abandoned upload declares, small enough that a 413 needs only a header. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

let proc: Subprocess<'ignore', 'pipe', 'pipe'>;
let port: number;
let key: string;
let log: Promise<string>;
/** Every route: operations (POST) and pages (GET), from the served OpenAPI document plus the two pages it does not list. */
let routes: { method: 'GET' | 'POST'; path: string; public: boolean; needsInput?: boolean }[];
let openapi: any;

/** `host: null` sends HTTP/1.0 without a Host (HTTP/1.1 requires one: Bun refuses that itself). */
const send = (method: string, path: string, host: string | null, headers: string[] = [], body = '') =>
  rawRequest(port, [`${method} ${path} HTTP/1.${host === null ? 0 : 1}`, ...(host === null ? [] : [`Host: ${host}`]), ...headers].join('\r\n'), body);
/** A route's request: no credential (nothing is written), no body. */
const call = (route: (typeof routes)[number], host: string | null) => send(route.method, route.path, host, ['Content-Length: 0']);

beforeAll(async () => {
  const out = await buildBinaryOnce();
  const env = {
    PATH: process.env.PATH ?? '',
    PARLEY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'parley-routing-')), 'data'),
    PARLEY_MAX_BODY_BYTES: String(MAX_BODY_BYTES),
    // A configured sign-in provider, so the sign-in pages run their real code.
    PARLEY_OAUTH_GITHUB_CLIENT_ID: 'id',
    PARLEY_OAUTH_GITHUB_CLIENT_SECRET: 'secret',
    PARLEY_PUBLIC_URL: 'http://localhost',
    // Set up (never reached: no request here gets that far), so audio/transcribe reads its body
    // and refuses a malformed one with 400 like any operation, instead of "not set up" (503).
    PARLEY_STT_BASE_URL: 'http://127.0.0.1:9/v1',
  };
  expect(Bun.spawnSync([out, 'user', 'create', '--email', 'ann@example.org'], { env }).exitCode).toBe(0);
  key = JSON.parse(Bun.spawnSync([out, 'apikey', 'create', '--email', 'ann@example.org', '--json'], { env }).stdout.toString()).key;
  proc = Bun.spawn([out, 'serve', '--port', '0'], { env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  log = new Response(proc.stderr).text(); // drained all along: a full pipe would stall the server
  port = Number(new URL(await waitForListening(proc)).port);
  openapi = JSON.parse((await send('GET', '/api/openapi.json', 'localhost')).body);
  routes = [
    ...Object.entries(openapi.paths as Record<string, any>).map(([path, item]) => ({
      // A page (the login link's also takes its form's POST) is routed by its GET.
      method: item.post && !item.get ? ('POST' as const) : ('GET' as const),
      path: path.replace('{provider}', 'github'),
      public: (item.post ?? item.get).security?.length === 0,
      // A public operation with required fields refuses the empty body (400), as any would.
      needsInput: (item.post?.requestBody?.content?.['application/json']?.schema?.required?.length ?? 0) > 0,
    })),
    { method: 'GET', path: '/api/openapi.json', public: true },
    { method: 'GET', path: '/api/docs', public: true },
  ];
});

afterAll(async () => {
  proc?.kill('SIGTERM');
  await proc?.exited;
});

describe('the compiled binary: routing whatever the Host header', () => {
  test('every route answers as it does for `Host: localhost`, for hosts of every length, with and without a port, IPv6 literals, none and empty', async () => {
    const expected = new Map<string, number>();
    for (const route of routes) {
      const { status, body } = await call(route, 'localhost');
      // The baseline is the route itself: an operation says 401 without a credential (200 if public, 400 if it needs input), a page answers.
      if (route.method === 'POST') expect({ route: route.path, status }).toEqual({ route: route.path, status: route.public ? (route.needsInput ? 400 : 200) : 401 });
      // The MCP client's metadata document exists on an https public address only (docs/mcp.md); here its own 404 says so.
      else if (route.path === MCP_CLIENT_METADATA_PATH) expect({ status, body }).toEqual({ status: 404, body: '{"error":"not_found"}' });
      else expect({ route: route.path, routed: ![404, 405].includes(status) && status < 500 }).toEqual({ route: route.path, routed: true });
      expected.set(route.path, status);
    }
    // HTTP/1.0 without a Host (a load balancer's health check) and an empty Host (RFC 9112 allows it) are for this server.
    for (const host of [...HOSTS, '', null]) {
      const answers = await Promise.all(routes.map(async (route) => [route.path, (await call(route, host)).status] as const));
      for (const [path, status] of answers) expect({ host, path, status }).toEqual({ host, path, status: expected.get(path)! });
    }
    const health = await send('GET', '/api/health', null);
    expect([health.status, health.body]).toEqual([200, '{"status":"ok"}']);
  });

  test('a credential works and the answer is the same under every Host', async () => {
    for (const host of HOSTS) {
      const res = await send('POST', '/api/preferences/get', host, [`x-api-key: ${key}`, 'Content-Length: 0']);
      expect({ host, status: res.status, body: res.body }).toEqual({ host, status: 200, body: '{"enableMemories":false,"showMemoryToolOutput":false}' });
    }
  });

  test('a path with an extra leading segment is 404 under every Host, never served as the path without it', async () => {
    for (const host of HOSTS)
      for (const prefix of ['/x', '/xy', '/xyz', '/api'])
        for (const [method, path] of [
          ['POST', '/api/preferences/get'],
          ['GET', '/api/health'],
          ['GET', '/api/auth/oauth/github'],
        ] as const) {
          const res = await send(method, prefix + path, host, [`x-api-key: ${key}`, 'Content-Length: 0']);
          expect({ host, path: prefix + path, status: res.status }).toEqual({ host, path: prefix + path, status: 404 });
        }
  });

  test('a Host that is no host name is refused with the 400 envelope; one the sign-in pages cannot parse too', async () => {
    for (const host of ['a b', 'a|b', 'a<b', 'é', '"x"']) {
      const res = await send('POST', '/api/preferences/get', host, [`x-api-key: ${key}`, 'Content-Length: 0']);
      expect({ host, status: res.status }).toEqual({ host, status: 400 });
      expect(JSON.parse(res.body)).toEqual({ defined: false, code: 'BAD_REQUEST', status: 400, message: 'Invalid Host header', data: {} });
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // Bun passes these through into the request's URL, which then does not parse: operations do
    // not read it, the pages that might are refused.
    for (const host of ['pi:abc', 'pi:99999', '[::1'])
      for (const path of ['/api/auth/oauth/github', '/api/auth/oauth/github/callback', '/api/health']) {
        const res = await send('GET', path, host);
        expect({ host, path, status: res.status }).toEqual({ host, path, status: 400 });
      }
  });
});

describe('the compiled binary: what the OpenAPI document says each operation answers', () => {
  const documented = (path: string, status: number) => Object.keys(openapi.paths[path].post.responses).includes(String(status));
  const envelope = (res: RawResponse) => Object.keys(JSON.parse(res.body)).sort();

  test('every operation: another method → 405 with Allow: POST, documented on its path; 401, 413 and 415 provoked and documented', async () => {
    const methodNotAllowed = openapi.components.responses.MethodNotAllowed;
    expect(Object.keys(methodNotAllowed.headers)).toEqual(['Allow']);
    let operations = 0;
    for (const [path, item] of Object.entries(openapi.paths as Record<string, any>)) {
      expect({ path, ref: item['x-method-not-allowed']?.$ref }).toEqual({ path, ref: '#/components/responses/MethodNotAllowed' });
      if (!item.post || item.get) continue; // operations only: a page's POST is a form (docs/api.md)
      operations++;
      for (const method of ['GET', 'PUT', 'DELETE', 'OPTIONS']) {
        const res = await send(method, path, 'localhost', [`x-api-key: ${key}`]);
        expect({ path, method, status: res.status, allow: res.headers.get('allow') }).toEqual({ path, method, status: 405, allow: 'POST' });
        expect(envelope(res)).toEqual(ENVELOPE_KEYS);
      }
      const head = await send('HEAD', path, 'localhost');
      expect({ path, status: head.status, allow: head.headers.get('allow') }).toEqual({ path, status: 405, allow: 'POST' });

      if (item.post.security.length) {
        const anonymous = await send('POST', path, 'localhost', ['Content-Length: 0']);
        expect({ path, status: anonymous.status, documented: documented(path, 401) }).toEqual({ path, status: 401, documented: true });
      }
      // An upload row takes multipart/form-data (src/http/upload.ts); every other row JSON.
      const bodyType = item.post.requestBody.content['multipart/form-data'] ? 'multipart/form-data; boundary=x' : 'application/json';
      const tooLarge = await send('POST', path, 'localhost', [`x-api-key: ${key}`, `Content-Type: ${bodyType}`, `Content-Length: ${MAX_BODY_BYTES + 1}`]);
      expect({ path, status: tooLarge.status, documented: documented(path, 413) }).toEqual({ path, status: 413, documented: true });
      expect(envelope(tooLarge)).toEqual(ENVELOPE_KEYS);
      const form = await send('POST', path, 'localhost', [`x-api-key: ${key}`, 'Content-Type: application/x-www-form-urlencoded', 'Content-Length: 3'], 'a=1');
      expect({ path, status: form.status, documented: documented(path, 415) }).toEqual({ path, status: 415, documented: true });
      const malformed = await send('POST', path, 'localhost', [`x-api-key: ${key}`, `Content-Type: ${bodyType}`, 'Content-Length: 1'], '{');
      expect({ path, status: malformed.status, documented: documented(path, 400) }).toEqual({ path, status: 400, documented: true });
      // A stream can be refused by the per-user cap and at shutdown; a rate-limited row by its bucket.
      if (item.post.responses[200].content['text/event-stream']) {
        expect({ path, documented: documented(path, 429) && documented(path, 503) }).toEqual({ path, documented: true });
        expect(item.post.responses[503].headers['Retry-After']).toBeDefined();
      }
    }
    expect(operations).toBeGreaterThan(40);
  });

  test('the pages: another method → 405 with Allow: GET, HEAD; HEAD answers as GET does', async () => {
    for (const path of ['/api/health', '/api/openapi.json', '/api/docs', '/api/auth/oauth/github', '/api/auth/oauth/github/callback']) {
      const res = await send('POST', path, 'localhost', ['Content-Length: 0']);
      expect({ path, status: res.status, allow: res.headers.get('allow') }).toEqual({ path, status: 405, allow: 'GET, HEAD' });
      const [get, head] = [await send('GET', path, 'localhost'), await send('HEAD', path, 'localhost')];
      expect({ path, head: head.status, body: head.body }).toEqual({ path, head: get.status, body: '' });
    }
  });
});

describe('the compiled binary: a client that leaves mid-upload', () => {
  test('is no server error: answered 499, logged as a request at info, nothing at error level, and the next request works', async () => {
    const head = ['POST /api/preferences/update HTTP/1.1', 'Host: localhost', `x-api-key: ${key}`, 'Content-Type: application/json'].join('\r\n');
    // Within the operation's 64 KiB body limit, so the server starts reading and the client leaves half-way.
    for (let i = 0; i < 3; i++) await abandonUpload(port, head, 48 * 1024, 24 * 1024);
    const next = await send('POST', '/api/preferences/update', 'localhost', [`x-api-key: ${key}`, 'Content-Type: application/json', 'Content-Length: 23'], '{"enableMemories":true}');
    expect([next.status, JSON.parse(next.body).enableMemories]).toEqual([200, true]);
    // The log is complete once the server has stopped.
    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    const lines = (await log).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    const left = lines.filter((l) => l.msg === 'request' && l.path === '/api/preferences/update' && l.status === 499);
    expect(left.map((l) => l.level)).toEqual(['info', 'info', 'info']);
  });
});
