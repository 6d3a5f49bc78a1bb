import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from './build-binary';
import { startFakeOpenAI } from './fakes/openai';
import { sharedFakeExpo } from './fakes/expo';
import { waitForListening } from '../scripts/lib/wait-for-listening';

// Issue 19's trust items, through the compiled executable: what a client sends reaches only
// what it may. These spawn processes; shared machines can be slow, and nothing here asserts on time.
setDefaultTimeout(120_000);

const openai = startFakeOpenAI();
afterAll(() => openai.stop());

/** A fresh data dir with the given users (each with a session), and `serve` on port 0 with `env`. */
async function withServer(emails: string[], env: Record<string, string>, body: (url: string, tokens: string[], base: Record<string, string>) => Promise<void>) {
  const out = await buildBinaryOnce();
  const base = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'parley-trust-')), 'data'), ...env };
  const tokens = emails.map((email) => {
    expect(Bun.spawnSync([out, 'user', 'create', '--email', email], { env: base }).exitCode).toBe(0);
    return JSON.parse(Bun.spawnSync([out, 'session', 'create', '--email', email, '--json'], { env: base }).stdout.toString()).token as string;
  });
  const proc = Bun.spawn([out, 'serve', '--port', '0'], { env: base, stdout: 'pipe', stderr: 'pipe' });
  try {
    await body(await waitForListening(proc), tokens, base);
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
  }
}

const post = (url: string, path: string, token: string, body: unknown) =>
  fetch(`${url}/api/${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('the compiled binary: image URLs reach the AI provider only when safe', () => {
  test('chat/stream with a file: and an http://127.0.0.1 image → 400 naming both; the fake model server never sees either', async () => {
    const env = { PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: openai.url, PARLEY_AI_API_KEY: 'sk-test', PARLEY_AI_MODEL: 'small' };
    await withServer(['ann@example.org'], env, async (url, [ann]) => {
      const images = [{ imageUrl: 'file:///etc/passwd' }, { imageUrl: 'http://127.0.0.1:8787/api/health' }];
      const refused = await post(url, 'chat/stream', ann!, { message: 'What is in these?', images });
      const text = await refused.text(); // the whole answer: a stream, had one started, runs to its end
      expect(JSON.stringify(openai.requests)).not.toContain('file:///etc/passwd');
      expect(refused.status).toBe(400);
      expect(JSON.parse(text).data.issues.map((i: { path: unknown }) => i.path)).toEqual([
        ['images', 0, 'imageUrl'],
        ['images', 1, 'imageUrl'],
      ]);
      // The fake is wired: a public https image does reach it.
      const allowed = await post(url, 'chat/stream', ann!, { message: 'And this?', images: [{ imageUrl: 'https://img.example/ok.png' }] });
      expect(await allowed.text()).toContain('"type":"done"');
      const upstream = JSON.stringify(openai.requests);
      expect(upstream).toContain('https://img.example/ok.png');
      expect(upstream).not.toContain('file:///etc/passwd');
      expect(upstream).not.toContain('127.0.0.1:8787');
    });
  });
});

describe('the compiled binary: push tokens', () => {
  test("two users, one token: the second user's registration does not take the first user's device until that user signs out", async () => {
    const fake = sharedFakeExpo();
    const env = { PARLEY_EXPO_BASE_URL: fake.url, PARLEY_PUSH_RECEIPT_DELAY_MS: '0', PARLEY_INTERNAL_EMAIL_DOMAIN: 'parley.test' };
    const TOKEN = 'ExponentPushToken[trust-bin-phone]';
    await withServer(['dev@parley.test', 'eve@parley.test'], env, async (url, [dev, eve]) => {
      const register = async (as: string) => expect(await (await post(url, 'notifications/registerPushToken', as, { token: TOKEN, platform: 'ios' })).json()).toEqual({ success: true });
      const testPush = async (as: string) => {
        fake.reset();
        const report = (await (await post(url, 'notifications/sendTestWebhookNotification', as, { conversationId: 'c', status: 'completed' })).json()) as { tokenCount: number };
        return { tokenCount: report.tokenCount, delivered: fake.delivered.map((m) => m.to) };
      };
      await register(dev!);
      await register(eve!); // Eve learned Dev's token
      expect(await testPush(eve!)).toEqual({ tokenCount: 0, delivered: [] });
      expect(await testPush(dev!)).toEqual({ tokenCount: 1, delivered: [TOKEN] });
      // The phone changes hands: Dev signs out on it, Eve signs in and the app registers the same token.
      expect((await post(url, 'auth/signOut', dev!, {})).status).toBe(200);
      await register(eve!);
      expect(await testPush(eve!)).toEqual({ tokenCount: 1, delivered: [TOKEN] });
    });
  });
});

describe('the compiled binary: OAuth callback address', () => {
  test('without PARLEY_PUBLIC_URL a sign-in start with a spoofed Host is refused with the no_public_url page, and doctor says why', async () => {
    const env = { PARLEY_OAUTH_GITHUB_CLIENT_ID: 'gh-id', PARLEY_OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret' };
    await withServer([], env, async (url, _, base) => {
      const res = await fetch(`${url}/api/auth/oauth/github`, { redirect: 'manual', headers: { host: 'evil.example', 'x-forwarded-proto': 'https' } });
      const page = await res.text();
      expect({ status: res.status, location: res.headers.get('location') }).toEqual({ status: 503, location: null });
      expect(page).toContain('<code>no_public_url</code>');
      expect(page).not.toContain('evil.example');
      const doctor = Bun.spawnSync([await buildBinaryOnce(), 'doctor', '--json'], { env: base });
      expect(JSON.parse(doctor.stdout.toString()).checks.find((c: { name: string }) => c.name === 'sign-in')).toMatchObject({ status: 'fail' });
    });
    // With it, the callback address is the configured one whatever the Host header says.
    await withServer([], { ...env, PARLEY_PUBLIC_URL: 'https://parley.example.org' }, async (url) => {
      const res = await fetch(`${url}/api/auth/oauth/github`, { redirect: 'manual', headers: { host: 'evil.example' } });
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get('location')!).searchParams.get('redirect_uri')).toBe('https://parley.example.org/api/auth/oauth/github/callback');
    });
  });
});
