import { describe, expect, test } from 'bun:test';
import { createTestContext } from './helpers';
import { createLoginLink, peekLoginLink, pruneLoginLinks, redeemLoginLink } from '../src/auth/login-link.store';
import { allRows } from '../src/db/work';
import { hashSecret } from '../src/auth/tokens';

const MIN = 60_000;

async function setup(config = {}) {
  let now = Date.UTC(2026, 0, 1, 10);
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }], config, now: () => now });
  const user = ctx.users[0]!.user;
  const link = async (ttl = 15 * MIN) => (await ctx.store.read((tx) => createLoginLink(tx, user.id, ttl, now))).token;
  const open = (token: string) => ctx.app.handle(new Request(`http://localhost/api/auth/login-link?token=${encodeURIComponent(token)}`));
  const press = (token: string, headers: Record<string, string> = { origin: 'http://localhost' }) =>
    ctx.app.handle(
      new Request('http://localhost/api/auth/login-link', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ token }).toString(),
      }),
    );
  return { ctx, user, link, open, press, advance: (ms: number) => (now += ms) };
}

const cookieOf = (res: Response) => /parley_session=(ps_[^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];

describe('login links: the store', () => {
  test('stored hashed, usable once, until they expire', async () => {
    const { ctx, user, link, advance } = await setup();
    const token = await link();
    const rows = await ctx.store.read(function* ({ db, t }) {
      return yield* allRows(db.select().from(t.loginLinks));
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hash).toBe(hashSecret(token));
    expect(JSON.stringify(rows)).not.toContain(token);
    expect((await ctx.store.read((tx) => peekLoginLink(tx, token, Date.UTC(2026, 0, 1, 10)))).ok).toBe(true);
    expect(await ctx.store.read((tx) => redeemLoginLink(tx, token, Date.UTC(2026, 0, 1, 10)))).toMatchObject({ ok: true, link: { userId: user.id } });
    expect(await ctx.store.read((tx) => redeemLoginLink(tx, token, Date.UTC(2026, 0, 1, 10)))).toEqual({ ok: false, reason: 'used' });
    const late = await link(MIN);
    advance(MIN);
    expect(await ctx.store.read((tx) => redeemLoginLink(tx, late, Date.UTC(2026, 0, 1, 10) + MIN))).toEqual({ ok: false, reason: 'expired' });
    expect(await ctx.store.read((tx) => redeemLoginLink(tx, 'pl_nothing', Date.now()))).toEqual({ ok: false, reason: 'unknown' });
    expect(await ctx.store.read((tx) => pruneLoginLinks(tx, Date.UTC(2026, 0, 3)))).toBe(2);
  });
});

describe('login links: the browser routes', () => {
  test('opening the link uses nothing up; the button signs in, sets the cookie as the OAuth callback does, and lands on the app', async () => {
    const { ctx, link, open, press } = await setup();
    const token = await link();
    // A mail scanner fetching the link twice leaves it usable.
    for (let i = 0; i < 2; i++) {
      const page = await open(token);
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('referrer-policy')).toBe('same-origin'); // so the button's POST carries the page's Origin
      const html = await page.text();
      expect(html).toContain('ann@example.org');
      expect(html).toContain('<form method="post" action="/api/auth/login-link">');
      expect(html).not.toContain('<script');
    }
    const res = await press(token);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).toContain('Path=/');
    const session = cookieOf(res)!;
    const me = await ctx.json('auth/getSession', {}, { cookie: `parley_session=${session}` });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe('ann@example.org');
  });

  test('a used, an expired and an unknown link each show a page saying so; no cookie', async () => {
    const { link, open, press, advance } = await setup();
    const used = await link();
    expect((await press(used)).status).toBe(303);
    const expired = await link(MIN);
    advance(MIN + 1);
    for (const [token, status, words] of [
      [used, 410, 'already used'],
      [expired, 410, 'has expired'],
      [`pl_${'A'.repeat(43)}`, 404, 'not valid'],
      ['pl_cut-short', 400, 'not valid'],
      ['', 400, 'not valid'],
    ] as const) {
      for (const res of [await open(token), await press(token)]) {
        expect(res.status).toBe(status);
        expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(await res.text()).toContain(words);
        expect(res.headers.get('set-cookie')).toBeNull();
      }
    }
  });

  test('a post from another site, or from nowhere said, is refused and leaves the link usable (login CSRF)', async () => {
    const { link, press } = await setup({ publicUrl: 'https://parley.example.org' });
    const token = await link();
    const refusals: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      {}, // no Origin: no browser's post from the link's page
      { origin: 'https://parley.example.org', 'sec-fetch-site': 'cross-site' },
      { origin: 'https://parley.example.org', 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of refusals) {
      const foreign = await press(token, headers);
      expect({ headers, status: foreign.status }).toEqual({ headers, status: 403 });
      expect(foreign.headers.get('set-cookie')).toBeNull();
      expect(await foreign.text()).toContain('did not come from the link&#39;s own page');
    }
    const ok = await press(token, { origin: 'https://parley.example.org', 'sec-fetch-site': 'same-origin' });
    expect(ok.status).toBe(303);
  });

  test('with PARLEY_APP_URL the browser goes there; without the web app and an app URL, a page says who is signed in', async () => {
    const app = await setup({ appUrl: 'https://app.example.org/home' });
    expect((await app.press(await app.link())).headers.get('location')).toBe('https://app.example.org/home');
    const bare = await setup({ web: false });
    const res = await bare.press(await bare.link());
    expect(res.status).toBe(200);
    expect(cookieOf(res)).toStartWith('ps_');
    expect(await res.text()).toContain('signed in as <strong>ann@example.org</strong>');
  });
});
