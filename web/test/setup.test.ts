/**
 * The first run in a browser, as a new user meets it: the compiled binary on an empty data
 * directory (no user at all), the setup link it prints, the first admin made in the page, then a
 * llama-server found on this machine's loopback and listed with its model — the real one the
 * real-model rig builds (a fake speaking llama.cpp's answers when it is not built yet, said on
 * the console). The same link opened again is refused with a page that says so.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { buildBinaryOnce } from '../../test/build-binary';
import { startLocalModelServer } from '../../test/fakes/local-model-servers';
import { cachedLlamaServerDir, startLlamaServer, testModelPath } from '../../scripts/real-models/llama-server';
import { ARGS, CHROMIUM, expectAccessible, waitOrExplain } from './harness';

let browser: Browser;
let server: ReturnType<typeof Bun.spawn>;
let llama: { url: string; model: string; stop(): unknown };
let setupUrl: string;
let base: string;
const printed: string[] = [];

/** What `parley serve` printed, read until `pattern` shows. */
async function readUntil(stdout: ReadableStream<Uint8Array>, pattern: RegExp): Promise<RegExpExecArray> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const m = pattern.exec(printed.join(''));
      if (m) return m;
      const { value, done } = await reader.read();
      if (done) throw new Error(`parley serve ended without printing ${pattern}: ${printed.join('')}`);
      printed.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    reader.releaseLock();
  }
}

beforeAll(async () => {
  const dir = cachedLlamaServerDir();
  if (dir) {
    const real = await startLlamaServer({ dir, model: testModelPath(), contextTokens: 512 });
    llama = { url: real.url, model: 'tiny', stop: () => real.stop() };
  } else {
    console.warn('web/test/setup.test.ts: no cached llama-server (scripts/real-models/build-llama-server.sh builds one): a fake speaking its answers stands in');
    const fake = startLocalModelServer('llama.cpp', ['tiny']);
    llama = { url: fake.url, model: 'tiny', stop: () => fake.stop() };
  }
  const bin = await buildBinaryOnce();
  const data = join(mkdtempSync(join(tmpdir(), 'parley-web-setup-')), 'data');
  const env = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: data, PARLEY_LOG_LEVEL: 'warn', PARLEY_DISCOVER_PORTS: new URL(llama.url).port };
  server = Bun.spawn([bin, 'serve', '--port', '0'], { env, stdout: 'pipe', stderr: 'inherit' });
  const stdout = server.stdout as ReadableStream<Uint8Array>;
  base = (await readUntil(stdout, /listening on (http:\/\/\S+)/))[1]!;
  setupUrl = (await readUntil(stdout, /(http:\/\/\S+\/setup#token=psu_[A-Za-z0-9_-]{43})/))[1]!;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}, 240_000);
afterAll(async () => {
  await browser?.close().catch(() => undefined);
  server?.kill('SIGTERM');
  await server?.exited;
  await llama?.stop();
});

describe('the first run in a browser', () => {
  test('the printed setup link → the first admin → a llama-server found on this machine, added with a click → a first answer; the same link again is refused', async () => {
    expect(setupUrl).toStartWith(`${base}/setup#token=`);
    const context = await browser.newContext();
    const page = await context.newPage();

    // Before anything: the sign-in page says where the way in is.
    await page.goto(`${base}/`);
    await waitOrExplain(page, page.getByText('Parley has no admin yet.'));

    await page.goto(setupUrl);
    await waitOrExplain(page, page.getByRole('heading', { name: 'Create the first admin' }));
    await expectAccessible(page, 'setup: the first admin');
    await page.getByRole('textbox', { name: 'Name' }).fill('Ann');
    await page.getByRole('textbox', { name: 'E-mail address' }).fill('ann@example.org');
    await page.getByRole('button', { name: 'Create admin' }).click();
    await waitOrExplain(page, page.getByRole('heading', { name: 'Connect an AI server' }));
    await page.getByText('You are signed in as Ann, the admin of this server.').waitFor();
    // The spent token is out of the address bar.
    expect(page.url()).toBe(`${base}/setup`);
    await expectAccessible(page, 'setup: connect an AI server');

    await page.getByRole('button', { name: 'Look for servers on this machine' }).click();
    await waitOrExplain(page, page.getByRole('heading', { name: /^Found / }));
    const port = new URL(llama.url).port;
    const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: new RegExp(`llama\\.cpp server.* at 127\\.0\\.0\\.1:${port}$`) }) });
    await card.waitFor();
    expect(await card.getByRole('list', { name: 'Chat models' }).getByRole('listitem').allTextContents()).toEqual([llama.model]);
    expect(await card.locator('.setup-add code').allTextContents()).toEqual([`parley connection add --name llama-cpp-${port} --kind chat --api openai-chat --base-url http://127.0.0.1:${port}/v1`]);
    await expectAccessible(page, 'setup: servers found');
    // Added with one click: no command, no restart.
    await card.getByRole('button', { name: `Add llama-cpp-${port}` }).click();
    await card.getByRole('status').getByText(`Added as llama-cpp-${port}`).waitFor();

    // On into the app, signed in as the admin, and a first answer from the server just added.
    await page.getByRole('link', { name: 'Go to Parley' }).click();
    await waitOrExplain(page, page.getByRole('button', { name: 'Sign out' }));
    await page.getByRole('navigation', { name: 'Places' }).getByRole('link', { name: 'Admin' }).waitFor();
    await page.getByRole('textbox', { name: 'Message' }).fill('Once upon a time');
    await page.getByRole('button', { name: 'Send' }).click();
    await waitOrExplain(page, page.locator('.message.assistant .markdown').first());
    await page.getByRole('button', { name: 'Send' }).waitFor(); // the answer ended
    expect((await page.locator('.message.assistant .markdown').first().innerText()).trim()).not.toBe('');
    // The tiny model writes on until its small context is full: the only ending it may have is that one.
    for (const text of await page.getByRole('alert').allInnerTexts()) expect(text).toContain('cut off');
    await context.close();

    // The same link, opened again (another browser): refused, with a page that says why.
    const again = await browser.newContext();
    const second = await again.newPage();
    await second.goto(setupUrl);
    await waitOrExplain(second, second.getByRole('heading', { name: 'This setup link was already used' }));
    await second.getByRole('alert').getByText('A setup link works once').waitFor();
    expect(await second.getByRole('textbox', { name: 'Name' }).count()).toBe(0);
    await expectAccessible(second, 'setup: the link used twice');
    await again.close();
  }, 180_000);
});
