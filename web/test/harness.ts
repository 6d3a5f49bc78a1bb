import { afterAll, beforeAll, expect } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildBinaryOnce } from '../../test/build-binary';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/fakes/openai';
import { waitForListening } from '../../scripts/lib/wait-for-listening';

/**
 * The browser tests' world: the compiled binary on a free port with the fake AI server, Debian's
 * Chromium driven by playwright-core (never a downloaded browser), and a login link per sign-in.
 */
export const CHROMIUM = process.env.PARLEY_CHROMIUM ?? '/usr/bin/chromium';
export const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

export interface World {
  url: string;
  /** The same server behind a TCP proxy whose connections the test can cut: a network that drops. */
  flaky: { url: string; cut(forMs: number): Promise<void> };
  ai: FakeOpenAI;
  browser: Browser;
  /** The server's settings file-less environment (the CLI runs with it too). */
  env: Record<string, string>;
  /** Run the binary's CLI with the server's settings, as an admin would; resolves with its stdout. */
  cli(args: string[], extra?: Record<string, string>): Promise<string>;
  /** `parley user create` another user (the world starts with Ann, `EMAIL`). */
  createUser(email: string, name: string): Promise<void>;
  /** `parley login-link` for the user, as an admin would run it. */
  loginLink(email?: string): Promise<string>;
  /** A fresh browser context (its own cookies), signed in through a login link (at `base`, default the server itself) as `email` (default Ann). */
  signedIn(options?: Parameters<Browser['newContext']>[0], base?: string, email?: string): Promise<{ context: BrowserContext; page: Page }>;
  stop(): Promise<void>;
}

export const EMAIL = 'ann@example.org';

/**
 * Settings for Parley's own research loop (openai-chat): plan with the fake model, search the fake
 * SearxNG at `searxngUrl`, read its pages (on loopback, hence PARLEY_FETCH_ALLOW_PRIVATE), then
 * stream the report. Two searches, one round.
 */
export const researchEnv = (searxngUrl: string): Record<string, string> => ({
  PARLEY_SEARCH_PROVIDER: 'searxng',
  PARLEY_SEARXNG_URL: searxngUrl,
  PARLEY_FETCH_ALLOW_PRIVATE: 'true',
  PARLEY_RESEARCH_MODEL: 'small',
  PARLEY_RESEARCH_BREADTH: '2',
  PARLEY_RESEARCH_DEPTH: '1',
});

export interface WorldOptions {
  /** More settings for the server (and its CLI), over the defaults below. */
  env?: Record<string, string>;
  /** More Chromium flags (a fake microphone fed from a file). */
  browserArgs?: string[];
}

export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const bin = await buildBinaryOnce();
  const dir = mkdtempSync(join(tmpdir(), 'parley-web-test-'));
  const ai = startFakeOpenAI();
  const env = {
    PATH: process.env.PATH ?? '',
    PARLEY_DATA_DIR: join(dir, 'data'),
    PARLEY_AI_PROVIDER: 'openai-chat',
    PARLEY_AI_BASE_URL: ai.url,
    PARLEY_AI_API_KEY: 'sk-test',
    PARLEY_AI_MODEL: 'small',
    PARLEY_AI_TOOLS: 'off',
    PARLEY_AI_VISION: 'off',
    PARLEY_RATE_LIMIT_AI: 'off',
    PARLEY_LOG_LEVEL: 'warn',
    ...options.env,
  };
  const cli = async (args: string[], extra: Record<string, string> = {}) => {
    const p = Bun.spawn([bin, ...args], { env: { ...env, ...extra }, cwd: dir, stdout: 'pipe', stderr: 'pipe' });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) throw new Error(`parley ${args.join(' ')} failed: ${err}`);
    return out.trim();
  };
  await cli(['user', 'create', '--email', EMAIL, '--name', 'Ann']);
  const server = Bun.spawn([bin, 'serve', '--port', '0'], { env, cwd: dir, stdout: 'pipe', stderr: 'inherit' });
  const url = await waitForListening(server);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...ARGS, ...(options.browserArgs ?? [])] });
  const flaky = startFlakyProxy(Number(new URL(url).port));
  const loginLink = (email = EMAIL, base = url) => cli(['login-link', '--email', email], { PARLEY_PUBLIC_URL: base });
  return {
    url,
    flaky,
    ai,
    browser,
    env,
    cli,
    async createUser(email, name) {
      await cli(['user', 'create', '--email', email, '--name', name]);
    },
    loginLink,
    async signedIn(options, base = url, email = EMAIL) {
      const context = await browser.newContext(options);
      const page = await context.newPage();
      recordTraffic(page);
      await page.goto(await loginLink(email, base));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${base}/`);
      // Attached, not visible: on a phone it is behind the Menu.
      await expect(page.getByRole('button', { name: 'Sign out', includeHidden: true }).waitFor({ state: 'attached' })).resolves.toBeUndefined();
      return { context, page };
    },
    async stop() {
      await browser.close().catch(() => undefined);
      server.kill('SIGTERM');
      await server.exited;
      ai.stop();
      flaky.stop();
    },
  };
}

/**
 * A loopback TCP proxy to the server. `cut` closes every connection through it and refuses new
 * ones for a while, as a network that drops does: the browser's open event stream breaks
 * mid-answer (an offline emulation leaves open streams alone).
 */
function startFlakyProxy(port: number) {
  type Pipe = { peer?: import('bun').Socket<Pipe>; pending: Uint8Array[] };
  const open = new Set<import('bun').Socket<Pipe>>();
  let down = false;
  const server = Bun.listen<Pipe>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      async open(client) {
        if (down) return void client.end();
        client.data = { pending: [] };
        open.add(client);
        const upstream = await Bun.connect<Pipe>({
          hostname: '127.0.0.1',
          port,
          socket: {
            data: (_, chunk) => void client.write(chunk),
            close: () => void client.end(),
            error: () => void client.end(),
          },
        });
        upstream.data = { peer: client, pending: [] };
        open.add(upstream);
        client.data.peer = upstream;
        for (const chunk of client.data.pending) upstream.write(chunk);
      },
      data(client, chunk) {
        if (client.data.peer) client.data.peer.write(chunk);
        else client.data.pending.push(new Uint8Array(chunk));
      },
      close(client) {
        open.delete(client);
        client.data?.peer?.end();
      },
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    async cut(forMs: number) {
      down = true;
      for (const s of open) s.terminate();
      open.clear();
      await Bun.sleep(forMs);
      down = false;
    },
    stop: () => server.stop(true),
  };
}

/**
 * What each page asked of the API, and when the answers came and ended, for a failure to show
 * (`waitOrExplain`). Recorded inside the page by wrapping `fetch`: Playwright's own request and
 * response events would do, but listening to them makes its client track every request object,
 * which under load on 2 cores raced with closing contexts ("Cannot find parent object").
 */
function recordTraffic(page: Page) {
  void page.addInitScript(() => {
    const win = globalThis as any;
    const log: string[] = (win.__parleyTraffic = []);
    const t0 = Date.now();
    const note = (line: string) => log.push(`${String(Date.now() - t0).padStart(6)} ms ${line}`);
    const original = win.fetch.bind(win);
    win.fetch = async (input: any, init?: any) => {
      const path = String(input?.url ?? input).replace(/^https?:\/\/[^/]+/, '');
      note(`> ${path} ${typeof init?.body === 'string' ? init.body.slice(0, 160) : ''}`);
      try {
        const res = await original(input, init);
        note(`< ${res.status} ${path}`);
        return res;
      } catch (err) {
        note(`x ${path} ${String(err)}`);
        throw err;
      }
    };
    win.addEventListener('error', (e: any) => note(`page error ${e.message}`));
    win.addEventListener('unhandledrejection', (e: any) => note(`unhandled rejection ${String(e.reason)}`));
  });
}

/**
 * Wait for `locator`; if it never shows, fail with what the page showed and its API traffic, so
 * a failure seen once on a CI machine says what happened instead of only "timeout".
 */
export async function waitOrExplain(page: Page, locator: ReturnType<Page['locator']>, timeout = 30_000): Promise<void> {
  try {
    await locator.waitFor({ timeout });
  } catch (err) {
    const shown = await page.locator('body').innerText({ timeout: 2000 }).catch((e) => `(unreadable: ${e})`);
    const log = await page.evaluate(() => ((globalThis as any).__parleyTraffic ?? []).slice(-60).join('\n')).catch((e) => `(unreadable: ${e})`);
    throw new Error(`${(err as Error).message}\n--- the page showed:\n${shown}\n--- its requests to the API and errors (newest last):\n${log}`);
  }
}

const axeSource = await Bun.file(require.resolve('axe-core/axe.min.js')).text();

/**
 * axe-core's check of the page as it is now: no serious or critical violation. The script goes in
 * through the DevTools protocol (page.evaluate), which the page's Content-Security-Policy does not
 * govern, so the check runs on the page exactly as users get it.
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // globalThis: this runs in the page, and the server's type check (which reaches this file) has no DOM types.
    const win = globalThis as any;
    const result = await win.axe.run(win.document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3) }));
  });
  const bad = violations.filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical');
  expect({ what, violations: bad }).toEqual({ what, violations: [] });
}

/** The chat's deltas, slow: `w01 w02 … wNN`, one word per delta, `delayMs` apart. */
export function slowAnswer(ai: FakeOpenAI, words: number, delayMs: number): string {
  const deltas = Array.from({ length: words }, (_, i) => ({ content: `w${String(i + 1).padStart(2, '0')} ` }));
  ai.eventDelayMs = delayMs;
  ai.chatScript = () => ({ deltas });
  return deltas.map((d) => d.content).join('').trim();
}

/**
 * One world for a test file: started before its first test (then `setup`), stopped after its
 * last. The object is filled in when the world has started, so tests use it as they would the
 * world itself.
 */
export function worldForFile(options: WorldOptions = {}, setup?: (world: World) => Promise<void>): World {
  const world = {} as World;
  beforeAll(async () => {
    Object.assign(world, await startWorld(options));
    await setup?.(world);
  }, 240_000);
  afterAll(async () => {
    await world.stop?.();
  });
  return world;
}

/**
 * The fake model calls one tool in its first streamed turn, then answers `answer`; requests that
 * are not streamed (a conversation's title) get a title.
 */
export function toolThenAnswer(ai: FakeOpenAI, name: string, args: unknown, answer: string): void {
  let turn = 0;
  ai.eventDelayMs = 0;
  ai.chatScript = (body) => {
    if (!body.stream) return { deltas: [{ content: 'Title' }] };
    return turn++ === 0
      ? { deltas: [{ tool_calls: [{ index: 0, id: `call_${name}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] }], finish_reason: 'tool_calls' }
      : { deltas: [{ content: answer }] };
  };
}

/** The newest answer in the chat on screen. */
export const lastAnswer = (page: Page) => page.locator('.message.assistant').last();

/** Type `text` in the composer and send it. */
export async function sendMessage(page: Page, text: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}
