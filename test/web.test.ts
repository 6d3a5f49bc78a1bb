import { describe, expect, test } from 'bun:test';
import { createTestContext, SPEC_ERRORS, type TestContext } from './helpers';
import { checkWebBudget, firstLoadScripts, type WebFile } from '../src/web/bundle-web';

const get = (ctx: TestContext, path: string, headers: Record<string, string> = {}) =>
  ctx.app.handle(new Request(`http://localhost${path}`, { headers }));

/** The page's script and stylesheet, as the HTML names them. */
const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);

const ctx = await createTestContext();

describe('the web app is served at / (in development: bundled from web/ on first request)', () => {

  test('the page: HTML, not cached, a strict policy, no inline script', async () => {
    const res = await get(ctx, '/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toStartWith('text/html');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    // Every <script> has a src: an inline one would be refused by the policy anyway.
    for (const tag of html.match(/<script[^>]*>/g) ?? []) expect(tag).toContain('src=');
    expect(html).not.toMatch(/https?:\/\//); // no CDN, no external font
    expect(assetsOf(html).length).toBeGreaterThanOrEqual(2);
  }, 30_000);

  test('every place of the app is the same page; a revalidation with the ETag is a 304', async () => {
    const page = await get(ctx, '/');
    const html = await page.text();
    const id = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
    for (const path of [`/c/${id}`, '/sessions', '/research', `/research/${id}`, '/groups', `/g/${id}`, '/join/pi_abc', '/settings', '/admin', '/files', '/memories', '/assistants', '/news', '/support', `/support/${id}`, '/apps', '/whats-new']) {
      const again = await get(ctx, path);
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(html);
    }
    const etag = page.headers.get('etag')!;
    const revalidated = await get(ctx, '/', { 'if-none-match': etag });
    expect(revalidated.status).toBe(304);
  });

  test('installable: the manifest, its icons and the service worker at the root; the worker caches the shell and never the API', async () => {
    const html = await (await get(ctx, '/')).text();
    expect(html).toContain('<link rel="manifest" href="/manifest.webmanifest">');
    const manifest = await get(ctx, '/manifest.webmanifest');
    expect(manifest.headers.get('content-type')).toBe('application/manifest+json');
    expect(manifest.headers.get('cache-control')).toBe('no-cache');
    const { icons, start_url, display } = (await manifest.json()) as { icons: { src: string; sizes: string; type: string; purpose?: string }[]; start_url: string; display: string };
    expect([start_url, display]).toEqual(['/', 'standalone']);
    for (const icon of icons) {
      const res = await get(ctx, icon.src);
      expect([icon.src, res.status, res.headers.get('content-type')]).toEqual([icon.src, 200, icon.type]);
      if (icon.type === 'image/png') {
        const bytes = new Uint8Array(await res.arrayBuffer());
        // PNG, and as large as it says: width and height in its IHDR chunk.
        expect([...bytes.slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
        const view = new DataView(bytes.buffer);
        expect(`${view.getUint32(16)}x${view.getUint32(20)}`).toBe(icon.sizes);
      }
    }
    const sw = await get(ctx, '/sw.js');
    expect(sw.headers.get('content-type')).toStartWith('text/javascript');
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    const worker = await sw.text();
    // The shell it caches: the page and every script and stylesheet it loads first.
    const shell = JSON.parse(/const SHELL = (\[.*?\]);/.exec(worker)![1]!) as string[];
    expect(shell).toEqual(expect.arrayContaining(['/', ...assetsOf(html)]));
    expect(worker).toContain("url.pathname.startsWith('/api/')");
  });

  test("KaTeX's stylesheet names its fonts as assets of their own, WOFF2 only, served from here", async () => {
    const html = await (await get(ctx, '/')).text();
    expect(html).not.toContain('katex');
    const sw = await (await get(ctx, '/sw.js')).text();
    const scripts = JSON.parse(/const SHELL = (\[.*?\]);/.exec(sw)![1]!).filter((p: string) => p.endsWith('.js')) as string[];
    const sources = await Promise.all(scripts.map(async (p) => (await get(ctx, p)).text()));
    const cssPath = sources.join('\n').match(/\/assets\/katex-[a-z0-9]+\.css/)?.[0];
    expect(cssPath).toBeDefined();
    const css = await (await get(ctx, cssPath!)).text();
    const fonts = [...css.matchAll(/url\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(fonts.length).toBe(20);
    expect(fonts.every((f) => /^\/assets\/KaTeX_[\w-]+-[a-z0-9]+\.woff2$/.test(f))).toBe(true);
    const font = await get(ctx, fonts[0]!);
    expect([font.status, font.headers.get('content-type'), font.headers.get('content-encoding')]).toEqual([200, 'font/woff2', null]);
    expect(new TextDecoder().decode((await font.arrayBuffer()).slice(0, 4))).toBe('wOF2');
    // The page's policy lets the fonts, the manifest and the worker in, still nothing from elsewhere.
    const csp = (await get(ctx, '/')).headers.get('content-security-policy')!;
    for (const rule of ["font-src 'self'", "manifest-src 'self'", "worker-src 'self'"]) expect(csp).toContain(rule);
  });

  test('hashed assets: their content type, cached for good, gzip when asked', async () => {
    const html = await (await get(ctx, '/')).text();
    for (const path of assetsOf(html)) {
      const res = await get(ctx, path, { 'accept-encoding': 'gzip, br' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toStartWith(path.endsWith('.js') ? 'text/javascript' : 'text/css');
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('vary')).toBe('accept-encoding');
      if (path.endsWith('.js')) expect(res.headers.get('content-encoding')).toBe('gzip');
      const plain = await get(ctx, path);
      expect(plain.headers.get('content-encoding')).toBeNull();
    }
    const missing = await get(ctx, '/assets/nothing-here.js');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(SPEC_ERRORS[404]);
  });

  test('the API keeps its JSON 404 and 405 under /api/', async () => {
    for (const path of ['/api/', '/api/nothing', '/api/c/x', '/api/assets/x.js']) {
      const res = await get(ctx, path);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toEqual(SPEC_ERRORS[404]);
    }
    const post = await ctx.app.handle(new Request('http://localhost/', { method: 'POST' }));
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('PARLEY_WEB=false: the API alone', () => {
  test('/ and the assets are the JSON 404', async () => {
    const ctx = await createTestContext({ config: { web: false } });
    for (const path of ['/', '/c/abc', '/sessions', '/groups', '/admin', '/assets/index.js']) {
      const res = await get(ctx, path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(SPEC_ERRORS[404]);
    }
  });
});

describe('the size budget', () => {
  const file = (path: string, text: string): WebFile => ({ path, type: 'text/javascript', text });
  const files = [
    file('/index.html', '<script type="module" src="/assets/a-1.js"></script>'),
    file('/assets/a-1.js', 'x'.repeat(2000) + crypto.randomUUID().repeat(200)),
    file('/assets/lazy-2.js', 'not loaded first'),
  ];

  test('counts the scripts the page loads, gzip-compressed', () => {
    expect(firstLoadScripts(files).map((f) => f.path)).toEqual(['/assets/a-1.js']);
    expect(checkWebBudget(files)).toBe(Bun.gzipSync(files[1]!.text, { level: 9 }).length);
  });

  test('a bundle over its budget fails the build', () => {
    expect(() => checkWebBudget(files, 50)).toThrow(/over its budget of 0\.0 KB/);
  });
});
