/**
 * The web app against the real tiny model: Debian's Chromium, the compiled binary and a real
 * llama-server (Qwen2.5's template), no fake in the answer's path. A person signs in with a login
 * link, asks, and reads an answer the model wrote, streamed into the page as Markdown; a reload
 * while it is being written picks it up again, and what the page shows at the end is what was
 * stored. Run by scripts/real-models/run.sh (and so by .ci/run); needs Chromium like
 * scripts/web/run.sh.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { expectAccessible, startWorld, type World } from '../../web/test/harness';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from './llama-server';
import { forward, startLoopbackProxy, type LoopbackProxy } from './loopback-proxy';
import { READ_MARKER, scriptedRead, wantsScriptedRead } from './scripted-read';
import { makePdf } from '../../test/fixtures/documents';

// Real processes on a shared 2-core machine; nothing here asserts on time.
setDefaultTimeout(180_000);

let llama: LlamaServer;
let world: World;
let proxy: LoopbackProxy;
/** The chat requests that went to the real model, after the scripted read_file call. */
const afterRead: any[] = [];
beforeAll(async () => {
  const dir = llamaServerDir();
  // Long answers (up to 400 tokens at a few ms each) leave time to reload mid-answer.
  llama = await startLlamaServer({ dir, model: testModelPath(), contextTokens: 4096, maxAnswerTokens: 400, templateFile: join(dir, 'templates', 'Qwen-Qwen2.5-7B-Instruct.jinja') });
  // Transparent, but for the read_file call the tiny model cannot make (scripted-read.ts).
  proxy = startLoopbackProxy(async (req) => {
    const body = req.method === 'POST' ? await req.text() : undefined;
    if (new URL(req.url).pathname === '/v1/chat/completions' && body) {
      const parsed = JSON.parse(body);
      const fileId = wantsScriptedRead(parsed);
      if (fileId) return scriptedRead(parsed.model, fileId);
      if (parsed.messages?.some((m: any) => m.role === 'tool' || /scriptedRead1/.test(JSON.stringify(m)))) afterRead.push(parsed);
    }
    return forward(llama.url, req, body);
  });
  world = await startWorld({
    env: { PARLEY_AI_BASE_URL: proxy.apiUrl, PARLEY_AI_API_KEY: 'none', PARLEY_AI_MODEL: 'tiny', PARLEY_AI_ANSWER_TOKENS: '400', PARLEY_AI_TOOLS: 'auto' },
  });
}, 240_000);
afterAll(async () => {
  await world?.stop();
  proxy?.stop();
  await llama?.stop();
});

type Page = import('playwright-core').Page;
const answer = (page: Page) => page.locator('.message.assistant').last().locator('.markdown');
/** Markdown renders whitespace and markup away; the words are the same. */
const words = (s: string) => s.replace(/[*_`#>|-]/g, ' ').split(/\s+/).filter(Boolean).join(' ');

/**
 * The conversation's stored answer once the server has it (the turn ends on the server whatever
 * the page does; the page's Send button says nothing, since it also shows while a page loads),
 * and then what the page ends up showing: both must be the same words.
 */
async function storedAndShown(page: Page): Promise<{ roles: string[]; stored: string; shown: string }> {
  const id = page.url().split('/c/')[1]!;
  const read = () =>
    page.evaluate(async (conversationId) => {
      const res = await fetch('/api/chat/getConversation', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ conversationId }) });
      return (await res.json()) as { items: { role: string; content: string }[] };
    }, id);
  let conversation = await read();
  for (const deadline = Date.now() + 120_000; conversation.items.at(-1)?.role !== 'assistant' && Date.now() < deadline; conversation = await read()) await Bun.sleep(250);
  const stored = words(conversation.items.at(-1)?.content ?? '');
  let shown = '';
  for (const deadline = Date.now() + 60_000; shown !== stored && Date.now() < deadline; await Bun.sleep(250)) shown = words((await answer(page).textContent().catch(() => '')) ?? '');
  return { roles: conversation.items.map((i) => i.role), stored, shown };
}

describe('the web app with a real model (llama-server, stories260K)', () => {
  test('ask, read the streamed answer; the page shows what was stored', async () => {
    const { context, page } = await world.signedIn();
    await page.getByRole('textbox', { name: 'Message' }).fill('Tell me a story about a cat.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/c\/[^/]+$/);
    const { roles, stored, shown } = await storedAndShown(page);
    expect(roles).toEqual(['user', 'assistant']);
    expect(stored.length).toBeGreaterThan(0);
    expect(shown).toBe(stored);
    await expectAccessible(page, 'a real answer');
    await context.close();
  });

  test('a reload while the model is writing picks the answer up again, whole', async () => {
    const { context, page } = await world.signedIn();
    await page.getByRole('textbox', { name: 'Message' }).fill('Once upon a time there was a big dog.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/c\/[^/]+$/);
    // In the page (globalThis: this file's type check has no DOM types).
    await page.waitForFunction(() => ((globalThis as any).document.querySelector('.message.assistant .markdown')?.textContent ?? '').length > 0, undefined, { timeout: 60_000 });
    const reloadedEarly = await page.getByRole('button', { name: 'Stop' }).isVisible();
    await page.reload();
    const { roles, stored, shown } = await storedAndShown(page);
    expect(roles).toEqual(['user', 'assistant']);
    expect(shown).toBe(stored);
    // Said, not asserted: on a fast machine the tiny model may finish before the reload.
    console.log(`real-model web: reloaded ${reloadedEarly ? 'while the answer was being written' : 'after the answer ended'}`);
    await context.close();
  });

  test('a PDF uploaded in the page and asked about: Parley reads it, its text reaches the real model, and the answer cites it', async () => {
    const { context, page } = await world.signedIn();
    const fact = 'The lighthouse on Quillon Point has exactly 1,847 steps.';
    await page.locator('#attach-file').setInputFiles({ name: 'lighthouse.pdf', mimeType: 'application/pdf', buffer: Buffer.from(await makePdf([['Harbour notes.', fact]])) });
    await page.getByRole('list', { name: 'Files to send' }).getByText(/lighthouse\.pdf/).waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor({ state: 'visible' });
    await page.getByRole('textbox', { name: 'Message' }).fill(`${READ_MARKER} How many steps?`);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/c\/[^/]+$/);
    const { roles, stored, shown } = await storedAndShown(page);
    expect(roles).toEqual(['user', 'assistant']);
    expect(shown).toBe(stored);
    const last = page.locator('.message.assistant').last();
    await last.getByRole('region', { name: 'Documents read' }).getByRole('link', { name: 'lighthouse.pdf' }).waitFor();
    // The round after the read went to the real model with the PDF's text in it.
    expect(JSON.stringify(afterRead.at(-1)?.messages ?? [])).toContain('1,847 steps');
    console.log(`real-model web: after reading the PDF the model answered ${JSON.stringify(stored.slice(0, 120))}`);
    await context.close();
  });
});
