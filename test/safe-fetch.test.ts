import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { safeFetch, SafeFetchError, fetchPolicy, type LookupAnswer } from '../src/net/safe-fetch';
import { isPrivateAddress } from '../src/net/address';
import { loadConfig } from '../src/config';

// Shared machines can be slow; a generous ceiling only turns a hang into a failure.
setDefaultTimeout(60_000);

/** A local web server standing in for "a page on the internet" and for "the operator's LAN". */
const target = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === '/page') return new Response(`page for host ${req.headers.get('host')}`);
    if (url.pathname === '/redirect') return Response.redirect(url.searchParams.get('to')!, 302);
    if (url.pathname === '/big') return new Response('x'.repeat(10_000));
    if (url.pathname === '/big-chunked')
      return new Response(
        new ReadableStream({
          start(c) {
            for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode('y'.repeat(1000)));
            c.close();
          },
        }),
      );
    if (url.pathname === '/slow') return Bun.sleep(5000).then(() => new Response('late'));
    if (url.pathname === '/loop') return Response.redirect(`${url.origin}/loop`, 302);
    return new Response('nope', { status: 404 });
  },
});
afterAll(() => target.stop(true));
const local = `http://127.0.0.1:${target.port}`;

/** A resolver with fixed answers: "public.test" has a public address, "mixed.test" a public and a loopback one. */
const fakeDns = (table: Record<string, string[]>) => async (host: string): Promise<LookupAnswer[]> => {
  const answers = table[host];
  if (!answers) throw new Error('ENOTFOUND');
  return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SafeFetchError) return err.reason;
    throw err;
  }
  return 'fetched';
}

describe('address classification', () => {
  test('private, loopback, link-local and special ranges, in every IPv4 and IPv6 spelling', () => {
    for (const ip of ['127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.0.1', '172.31.255.254', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd12:3456::1', 'fc00::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::7f00:1', '2002:a00:1::1', '2002:808:808::1', '[::1]', 'not-an-ip'])
      expect({ ip, private: isPrivateAddress(ip) }).toEqual({ ip, private: true });
    // 6to4 (2002::/16) is refused whatever it carries: its registry row is not globally reachable
    // (test/address-registry.test.ts walks every row).
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])
      expect({ ip, private: isPrivateAddress(ip) }).toEqual({ ip, private: false });
  });
});

describe('safeFetch', () => {
  test('loopback is refused by default, in every spelling; allowed when configured', async () => {
    for (const url of [`${local}/page`, `http://localhost:${target.port}/page`, `http://[::1]:${target.port}/page`, `http://[::ffff:127.0.0.1]:${target.port}/page`, `http://2130706433:${target.port}/page`, `http://0x7f.1:${target.port}/page`])
      expect({ url, got: await refusal(safeFetch(url)) }).toEqual({ url, got: 'PRIVATE_ADDRESS' });
    const ok = await safeFetch(`${local}/page`, { allowPrivate: true });
    expect(ok.status).toBe(200);
    expect(ok.text()).toBe(`page for host 127.0.0.1:${target.port}`);
  });

  test('the config rows feed the policy', async () => {
    const allowAll = fetchPolicy(loadConfig({ PARLEY_FETCH_ALLOW_PRIVATE: 'true' }));
    expect((await safeFetch(`${local}/page`, allowAll)).status).toBe(200);
    const allowOne = fetchPolicy(loadConfig({ PARLEY_FETCH_ALLOW_HOSTS: 'searxng.lan, 127.0.0.1' }));
    expect(allowOne).toEqual({ allowPrivate: false, allowHosts: ['searxng.lan', '127.0.0.1'] });
    expect((await safeFetch(`${local}/page`, allowOne)).status).toBe(200);
    expect(await refusal(safeFetch(`http://localhost:${target.port}/page`, allowOne))).toBe('PRIVATE_ADDRESS');
    expect(fetchPolicy(loadConfig({}))).toEqual({ allowPrivate: false, allowHosts: [] });
  });

  test('every DNS answer is checked, and the request goes to the checked address with the original Host', async () => {
    const lookup = fakeDns({ 'mixed.test': ['93.184.216.34', '127.0.0.1'], 'lan.test': ['127.0.0.1'], 'v6.test': ['::1'] });
    expect(await refusal(safeFetch(`http://mixed.test:${target.port}/page`, { lookup }))).toBe('PRIVATE_ADDRESS');
    expect(await refusal(safeFetch(`http://v6.test:${target.port}/page`, { lookup }))).toBe('PRIVATE_ADDRESS');
    expect(await refusal(safeFetch(`http://nowhere.test/page`, { lookup }))).toBe('DNS');
    // An allowed host is reached at the address that was checked; the server sees the name.
    const pinned = await safeFetch(`http://lan.test:${target.port}/page`, { lookup, allowHosts: ['lan.test'] });
    expect(pinned.text()).toBe(`page for host lan.test:${target.port}`);
  });

  test('redirects are followed by hand and every hop is checked', async () => {
    const lookup = fakeDns({ 'start.test': ['127.0.0.1'], localhost: ['127.0.0.1', '::1'] });
    const opts = { lookup, allowHosts: ['start.test'] };
    const start = `http://start.test:${target.port}/redirect?to=`;
    for (const to of [`${local}/page`, `http://localhost:${target.port}/page`, `http://[::1]:${target.port}/page`, 'http://169.254.169.254/latest/meta-data/'])
      expect({ to, got: await refusal(safeFetch(start + encodeURIComponent(to), opts)) }).toEqual({ to, got: 'PRIVATE_ADDRESS' });
    expect(await refusal(safeFetch(start + encodeURIComponent('file:///etc/passwd'), opts))).toBe('SCHEME');
    const followed = await safeFetch(start + encodeURIComponent('/page'), opts);
    expect(followed.text()).toBe(`page for host start.test:${target.port}`);
    expect(followed.url).toBe(`http://start.test:${target.port}/page`);
    expect(await refusal(safeFetch(`${local}/loop`, { allowPrivate: true, maxRedirects: 3 }))).toBe('TOO_MANY_REDIRECTS');
  });

  test('size and time are bounded; only http and https', async () => {
    const opts = { allowPrivate: true, maxBytes: 1000 };
    expect(await refusal(safeFetch(`${local}/big`, opts))).toBe('TOO_LARGE');
    expect(await refusal(safeFetch(`${local}/big-chunked`, opts))).toBe('TOO_LARGE');
    for (const path of ['/big', '/big-chunked']) {
      const cut = await safeFetch(`${local}${path}`, { ...opts, truncate: true });
      expect(cut.bytes.byteLength).toBe(1000);
    }
    const started = performance.now();
    expect(await refusal(safeFetch(`${local}/slow`, { allowPrivate: true, timeoutMs: 200 }))).toBe('TIMEOUT');
    expect(performance.now() - started).toBeLessThan(2000);
    // The caller's own signal stops it at once, with the caller's reason (not a timeout).
    const stop = new AbortController();
    const stopping = safeFetch(`${local}/slow`, { allowPrivate: true, signal: stop.signal });
    setTimeout(() => stop.abort(new Error('turn cancelled')), 100);
    const stoppedAt = performance.now();
    expect(await stopping.then(() => 'answered', (err: Error) => err.message)).toBe('turn cancelled');
    expect(performance.now() - stoppedAt).toBeLessThan(2000);
    for (const url of ['file:///etc/passwd', 'ftp://example.org/', 'data:text/plain,hi'])
      expect(await refusal(safeFetch(url, { allowPrivate: true }))).toBe('SCHEME');
  });

  const openssl = Bun.which('openssl');
  (openssl ? test : test.skip)('https to a pinned address still verifies the certificate against the host name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-tls-'));
    const gen = Bun.spawnSync([openssl!, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-days', '1', '-subj', '/CN=secure.test', '-addext', 'subjectAltName=DNS:secure.test'], { stderr: 'pipe' });
    expect(gen.exitCode).toBe(0);
    const cert = readFileSync(join(dir, 'c.pem'), 'utf8');
    const tls = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { cert, key: readFileSync(join(dir, 'k.pem'), 'utf8') }, fetch: (r) => new Response(`tls ${r.headers.get('host')}`) });
    try {
      const lookup = fakeDns({ 'secure.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] });
      const ok = await safeFetch(`https://secure.test:${tls.port}/`, { lookup, allowHosts: ['secure.test'], tls: { ca: cert } });
      expect(ok.text()).toBe(`tls secure.test:${tls.port}`);
      // Same address, wrong name: the certificate check still applies after pinning.
      await expect(safeFetch(`https://other.test:${tls.port}/`, { lookup, allowHosts: ['other.test'], tls: { ca: cert } })).rejects.toThrow();
    } finally {
      tls.stop(true);
    }
  });
});
