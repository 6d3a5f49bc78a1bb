import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { expectAccessible, researchEnv, startWorld, type World } from './harness';
import { startFakeSearxng, type FakeSearxng } from '../../test/fakes/searxng';

let world: World;
let searx: FakeSearxng;
beforeAll(async () => {
  searx = startFakeSearxng();
  world = await startWorld({ env: researchEnv(searx.url) });
}, 240_000);
afterAll(async () => {
  await world?.stop();
  searx?.stop();
});

const THOUGHT = 'The moon and the sun both pull on the oceans.';

/**
 * The fake model as the research loop uses it: the planner's request (not streamed) gets two
 * queries and a thought; the report (streamed) gets `report`, one delta per piece.
 */
function scriptResearch(report: string[], delayMs = 0) {
  world.ai.eventDelayMs = delayMs;
  world.ai.chatScript = (body) =>
    body.stream ? { deltas: report.map((content) => ({ content })) } : { deltas: [{ reasoning_content: THOUGHT }, { content: '["tides moon", "tides sun"]' }] };
}

/** A slow report: `w01 w02 … wNN`, one word per delta. */
function slowReport(words: number, delayMs: number): string {
  const pieces = Array.from({ length: words }, (_, i) => `w${String(i + 1).padStart(2, '0')} `);
  scriptResearch(pieces, delayMs);
  return pieces.join('').trim();
}

const status = (page: Page) => page.getByRole('status');
const report = (page: Page) => page.getByRole('region', { name: 'Report' }).locator('.markdown');

async function startResearch(page: Page, question: string): Promise<string> {
  await page.goto(`${world.url}/research`);
  await page.getByRole('textbox', { name: 'Research question' }).fill(question);
  await page.getByRole('button', { name: 'Start research' }).click();
  await page.waitForURL(/\/research\/[^/]+$/);
  return new URL(page.url()).pathname.split('/').pop()!;
}

describe('deep research in the web app', () => {
  test('start a research: its searches, folded reasoning, the report as Markdown and its sources', async () => {
    scriptResearch(['## Tides\n\n', '**Tides** follow the moon [1] ', 'and the sun [2].\n']);
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/research`);
    await page.getByRole('heading', { name: 'Research', exact: true }).waitFor();
    await page.getByText('No research yet.').waitFor();
    await expectAccessible(page, 'research page, empty');

    await startResearch(page, 'Why are there tides?');
    await page.getByRole('heading', { name: 'Why are there tides?' }).waitFor();
    await status(page).getByText('Finished.').waitFor({ timeout: 60_000 });

    const searches = page.getByRole('region', { name: 'Searches' }).getByRole('listitem');
    await expect(searches.allTextContents()).resolves.toEqual(['tides moon (3 results)', 'tides sun (3 results)']);
    // The reasoning is there, folded away until asked for.
    const reasoning = page.locator('details', { hasText: 'Reasoning' });
    await expect(reasoning.evaluate((d: HTMLDetailsElement) => d.open)).resolves.toBe(false);
    await expect(page.getByText(THOUGHT).isVisible()).resolves.toBe(false);
    await reasoning.getByText('Reasoning').click();
    await page.getByText(THOUGHT).waitFor();

    await expect(report(page).locator('h2').textContent()).resolves.toBe('Tides');
    await expect(report(page).locator('strong').textContent()).resolves.toBe('Tides');
    // The sources are the pages read, numbered as the report cites them ([1], [2]): the top
    // result of each search. Everything the searches found is folded away below them.
    const sourcesRegion = page.getByRole('region', { name: 'Sources' });
    const cited = sourcesRegion.getByRole('list').first().getByRole('listitem');
    await expect(cited.evaluateAll((lis) => lis.map((li) => `${(li as any).value} ${li.querySelector('a')!.textContent}`))).resolves.toEqual([
      '1 Page tides-moon-1',
      '2 Page tides-sun-1',
    ]);
    const first = sourcesRegion.getByRole('link', { name: 'Page tides-moon-1' });
    await expect(first.getAttribute('href')).resolves.toBe(`${searx.url}/page/tides-moon-1`);
    await expect(first.getAttribute('rel')).resolves.toBe('noopener noreferrer');
    await expect(sourcesRegion.getByRole('link').count()).resolves.toBe(2);
    await sourcesRegion.getByText('Everything the searches found (6)').click();
    await expect(sourcesRegion.getByRole('link').count()).resolves.toBe(8);
    await expect(page.getByRole('button', { name: 'Stop' }).count()).resolves.toBe(0);
    await expectAccessible(page, 'research page, finished');

    // Opened again later: the report, its searches and its sources, each once.
    await page.reload();
    await status(page).getByText('Finished.').waitFor();
    await expect(report(page).locator('strong').textContent()).resolves.toBe('Tides');
    await expect(searches.allTextContents()).resolves.toEqual(['tides moon (3 results)', 'tides sun (3 results)']);
    await expect(page.getByRole('region', { name: 'Sources' }).getByRole('list').first().getByRole('link').allTextContents()).resolves.toEqual(['Page tides-moon-1', 'Page tides-sun-1']);
    await context.close();
  }, 120_000);

  test('close the tab mid-run: the list shows it running, the page follows it to the end without a repeated word, then the list says finished', async () => {
    const expected = slowReport(40, 200);
    const { context, page } = await world.signedIn();
    const id = await startResearch(page, 'What drives ocean currents?');
    await report(page).getByText('w01', { exact: false }).waitFor({ timeout: 60_000 });
    await expect(page.getByRole('button', { name: 'Stop' }).isVisible()).resolves.toBe(true);
    await expectAccessible(page, 'research page, running');
    await page.close();

    const later = await context.newPage();
    await later.goto(`${world.url}/research`);
    const row = later.getByRole('region', { name: 'Your research' }).getByRole('listitem').filter({ has: later.getByRole('link', { name: 'What drives ocean currents?' }) });
    await row.getByText('Running').waitFor();
    await row.getByRole('link').click();
    await later.waitForURL(`${world.url}/research/${id}`);
    await status(later).getByText('Finished.').waitFor({ timeout: 90_000 });
    await expect(report(later).textContent().then((t) => t!.trim())).resolves.toBe(expected);
    await expect(later.getByRole('region', { name: 'Searches' }).getByRole('listitem').count()).resolves.toBe(2);

    await later.getByRole('link', { name: 'New research' }).click();
    await later.waitForURL(`${world.url}/research`);
    await row.getByText('Finished').waitFor();
    await context.close();
  }, 180_000);

  test('from the keyboard alone: Enter starts a research, Stop stops it and the page says so', async () => {
    slowReport(60, 200);
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/research`);
    await page.getByRole('textbox', { name: 'Research question' }).fill('Why is the sea salty?');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/research\/[^/]+$/);
    await report(page).getByText('w02', { exact: false }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Stop' }).focus();
    await page.keyboard.press('Enter');
    await status(page).getByText('Stopped.').waitFor({ timeout: 30_000 });
    await expect(page.getByRole('button', { name: 'Stop' }).count()).resolves.toBe(0);
    await page.goto(`${world.url}/research`);
    const row = page.getByRole('region', { name: 'Your research' }).getByRole('listitem').filter({ hasText: 'Why is the sea salty?' });
    await row.getByText('Stopped').waitFor();
    await context.close();
  }, 120_000);

  test('"Notify me when it\'s done": asks only on the click, and a notification says the research finished', async () => {
    slowReport(12, 200);
    const { context, page } = await world.signedIn();
    await context.grantPermissions(['notifications'], { origin: world.url });
    await context.addInitScript(() => {
      const w = window as unknown as { shown: { title: string; body?: string }[]; asked: number };
      w.shown = [];
      w.asked = 0;
      const Real = window.Notification;
      class Recorded extends Real {
        constructor(title: string, options?: NotificationOptions) {
          w.shown.push({ title, body: options?.body });
          super(title, options);
        }
        static override requestPermission(...args: Parameters<typeof Real.requestPermission>) {
          w.asked++;
          return Real.requestPermission(...args);
        }
      }
      window.Notification = Recorded;
    });
    await startResearch(page, 'How do tsunamis form?');
    const ask = page.getByRole('button', { name: "Notify me when it's done" });
    await ask.waitFor();
    await expect(page.evaluate(() => (window as any).asked)).resolves.toBe(0);
    await ask.click();
    await page.getByText('You will get a notification when it is done.').waitFor();
    await expect(page.evaluate(() => (window as any).asked)).resolves.toBe(1);
    await status(page).getByText('Finished.').waitFor({ timeout: 90_000 });
    await expect(page.evaluate(() => (window as any).shown)).resolves.toEqual([{ title: 'Research finished', body: 'How do tsunamis form?' }]);
    await context.close();
  }, 180_000);
  test('a document attached to the question goes with the run: the report request names it for the model to read and cite', async () => {
    scriptResearch(['## Orchard\n\n', 'From your notes: prune in February.\n']);
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/research`);
    await page.locator('#research-file').setInputFiles({ name: 'orchard-notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Orchard\n\nPrune the quince in February.\n') });
    await page.getByRole('list', { name: 'Files to send' }).getByText('orchard-notes.md').waitFor();
    await expectAccessible(page, 'research with a document attached');
    const before = world.ai.requests.length;
    await page.getByRole('textbox', { name: 'Research question' }).fill('When should I prune my orchard?');
    await page.getByRole('button', { name: 'Start research' }).click();
    await status(page).getByText('Finished.').waitFor({ timeout: 60_000 });
    await report(page).getByText('prune in February').waitFor();
    const sent = JSON.stringify(world.ai.requests.slice(before).map((r) => r.body));
    expect(sent).toContain('orchard-notes.md');
    await context.close();
  }, 90_000);
});
