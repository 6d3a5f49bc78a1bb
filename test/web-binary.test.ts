import { describe, expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from './build-binary';
import { waitForListening } from '../scripts/lib/wait-for-listening';
import { WEB_JS_BUDGET_BYTES } from '../src/web/bundle-web';

async function run(bin: string, args: string[], env: Record<string, string>, cwd: string) {
  const p = Bun.spawn([bin, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

/** `parley serve` on a free port from an empty directory (no web/ beside it), stopped after `fn`. */
async function withServer(env: Record<string, string>, fn: (url: string, bin: string, cwd: string, log: () => Promise<string>) => Promise<void>) {
  const bin = await buildBinaryOnce();
  const cwd = mkdtempSync(join(tmpdir(), 'parley-web-'));
  const full = { PARLEY_DATA_DIR: join(cwd, 'data'), ...env };
  expect((await run(bin, ['user', 'create', '--email', 'ann@example.org'], full, cwd)).code).toBe(0);
  const proc = Bun.spawn([bin, 'serve', '--port', '0'], { env: { PATH: process.env.PATH ?? '', ...full }, cwd, stdout: 'pipe', stderr: 'pipe' });
  try {
    const url = await waitForListening(proc);
    await fn(url, bin, cwd, () => new Response(proc.stderr).text());
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
  }
}

describe('the compiled binary: the web app', () => {
  test('serves the embedded app at / with no web/ beside it: hashed assets, gzip, the policy, within the size budget; /api/ stays JSON', async () => {
    await withServer({}, async (url) => {
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(page.headers.get('cache-control')).toBe('no-cache');
      const html = await page.text();
      const scripts = [...html.matchAll(/<script[^>]*src="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
      expect(scripts.length).toBeGreaterThan(0);
      let gzipped = 0;
      for (const path of scripts) {
        // fetch would undo the gzip: read the bytes as they travel.
        const res = await fetch(`${url}${path}`, { headers: { 'accept-encoding': 'gzip' }, decompress: false });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-encoding')).toBe('gzip');
        expect(res.headers.get('cache-control')).toContain('immutable');
        gzipped += (await res.arrayBuffer()).byteLength;
      }
      expect(gzipped).toBeLessThanOrEqual(WEB_JS_BUDGET_BYTES);
      const api = await fetch(`${url}/api/nothing`);
      expect(api.status).toBe(404);
      expect(api.headers.get('content-type')).toBe('application/json');
    });
  }, 180_000);

  test("carries KaTeX's fonts once, as the web app's WOFF2 files: no stylesheet with the fonts inlined beside them", async () => {
    // The build-time helper that makes the math assets once pulled katex.min.css into the
    // executable through `require.resolve`, every font inlined as a data: URL (1.4 MB).
    const bytes = Buffer.from(await Bun.file(await buildBinaryOnce()).arrayBuffer());
    expect(bytes.includes('data:font/woff2;base64,')).toBe(false);
    expect(bytes.includes('/assets/KaTeX_Main-Regular-')).toBe(true);
  }, 180_000);

  test('PARLEY_WEB=false: / is the JSON 404', async () => {
    await withServer({ PARLEY_WEB: 'false' }, async (url) => {
      const res = await fetch(`${url}/`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { code: string }).code).toBe('NOT_FOUND');
    });
  }, 180_000);

  test('parley login-link: a one-time link under the listening address; the button signs the browser in, once', async () => {
    await withServer({}, async (url, bin, cwd) => {
      const port = new URL(url).port;
      const env = { PARLEY_DATA_DIR: join(cwd, 'data'), PARLEY_PORT: port };
      const made = await run(bin, ['login-link', '--email', 'ann@example.org', '--ttl-minutes', '5'], env, cwd);
      expect(made.code).toBe(0);
      const link = made.out.trim();
      expect(link).toStartWith(`http://127.0.0.1:${port}/api/auth/login-link?token=pl_`);
      expect(made.err).toContain('PARLEY_PUBLIC_URL is not set');
      const token = new URL(link).searchParams.get('token')!;
      expect((await fetch(link)).status).toBe(200);
      const press = () =>
        fetch(`${url}/api/auth/login-link`, { method: 'POST', redirect: 'manual', headers: { origin: url, 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${token}` });
      const signedIn = await press();
      expect(signedIn.status).toBe(303);
      expect(signedIn.headers.get('location')).toBe('/');
      const session = /parley_session=(ps_[^;]+)/.exec(signedIn.headers.get('set-cookie') ?? '')![1];
      const me = await fetch(`${url}/api/auth/getSession`, { method: 'POST', headers: { cookie: `parley_session=${session}`, 'content-type': 'application/json' }, body: '{}' });
      expect(((await me.json()) as { user: { email: string } }).user.email).toBe('ann@example.org');
      const again = await press();
      expect(again.status).toBe(410);
      expect(await again.text()).toContain('already used');

      const json = await run(bin, ['login-link', '--email', 'ann@example.org', '--json'], { ...env, PARLEY_PUBLIC_URL: 'https://parley.example.org' }, cwd);
      expect(JSON.parse(json.out).url).toStartWith('https://parley.example.org/api/auth/login-link?token=pl_');
      expect((await run(bin, ['login-link', '--email', 'ann@example.org', '--ttl-minutes', '0'], env, cwd)).code).toBe(2);
      expect((await run(bin, ['login-link', '--email', 'nobody@example.org'], env, cwd)).code).toBe(2);
    });
  }, 180_000);
});
