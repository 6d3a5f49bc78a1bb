import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { EMAIL, researchEnv, startWorld, type World } from './harness';
import { startFakeSearxng, type FakeSearxng } from '../../test/fakes/searxng';

/**
 * The screenshots in docs/screenshots/, made by this run (scripts/web/run.sh): the main pages as a
 * person sees them, with content, through the compiled binary. Each shot waits for what the page
 * must show first, so a page that broke fails here instead of leaving a picture of an error.
 */
const OUT = join(import.meta.dir, '..', '..', 'docs', 'screenshots');
const DESKTOP = { viewport: { width: 1200, height: 760 } };

let world: World;
let searx: FakeSearxng;
beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  searx = startFakeSearxng();
  world = await startWorld({ env: researchEnv(searx.url) });
  await world.cli(['user', 'set', '--email', EMAIL, '--admin']);
  await world.createUser('bob@example.org', 'Bob');
}, 240_000);
afterAll(async () => {
  await world?.stop();
  searx?.stop();
});

const shoot = (page: Page, name: string) => page.screenshot({ path: join(OUT, `${name}.png`) });

const ANSWER = [
  'Here is a plan for **sourdough** at home:\n\n',
  '| Step | Time |\n|---|---|\n| Feed the starter | 8 h |\n| Mix and rest | 1 h |\n| Bake at 230 °C | 40 min |\n\n',
  'Keep the dough covered while it rests:\n\n```\nhydration = water / flour  # 0.75 is a good start\n```\n',
];

describe('screenshots of the main pages (docs/screenshots/)', () => {
  test('sign-in, chat, research, a group, settings, admin, and a phone in dark mode', async () => {
    const signedOut = await world.browser.newContext(DESKTOP);
    const start = await signedOut.newPage();
    await start.goto(`${world.url}/`);
    await start.getByRole('heading', { name: 'Sign in to Parley' }).waitFor();
    await shoot(start, 'sign-in');
    await signedOut.close();

    world.ai.eventDelayMs = 0;
    world.ai.chatScript = (body) =>
      body.stream ? { deltas: ANSWER.map((content) => ({ content })) } : { deltas: [{ content: '["sourdough starter", "sourdough baking time"]' }] };
    const { context, page } = await world.signedIn(DESKTOP);
    await page.getByRole('textbox', { name: 'Message' }).fill('How do I bake sourdough bread?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/c\/[^/]+$/);
    await page.locator('.message.assistant pre code').waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await shoot(page, 'chat');

    await page.goto(`${world.url}/research`);
    await page.getByRole('textbox', { name: 'Research question' }).fill('How long does sourdough take from starter to loaf?');
    await page.getByRole('button', { name: 'Start research' }).click();
    await page.getByRole('status').getByText('Finished.').waitFor({ timeout: 60_000 });
    await shoot(page, 'research');

    await page.goto(`${world.url}/groups`);
    await page.getByRole('textbox', { name: "New group's name" }).fill('Family');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByRole('heading', { name: 'Family' }).waitFor();
    world.ai.chatScript = () => ({ deltas: [{ content: 'How about **lasagne** and a green salad?' }] });
    for (const text of ['Who is cooking tonight?', '@ai what should we cook?']) {
      await page.getByRole('textbox', { name: 'Message' }).fill(text);
      await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    }
    await page.getByRole('log', { name: 'Messages' }).getByText('and a green salad?').waitFor({ timeout: 30_000 });
    await shoot(page, 'group');

    await page.goto(`${world.url}/settings`);
    await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor();
    await page.getByText('FREE').first().waitFor();
    await shoot(page, 'settings');

    await page.goto(`${world.url}/admin`);
    await page.getByRole('region', { name: 'Users' }).getByRole('cell', { name: 'bob@example.org', exact: true }).waitFor();
    await shoot(page, 'admin');
    await context.close();

    const phone = await world.signedIn({ viewport: { width: 390, height: 780 }, colorScheme: 'dark' });
    await phone.page.getByRole('button', { name: 'Conversations' }).click();
    await phone.page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: 'How do I bake sourdough bread?' }).click();
    await phone.page.locator('.message.assistant pre code').waitFor();
    // Nothing wider than the phone: the long code line scrolls inside its block.
    await expect(phone.page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
    await shoot(phone.page, 'phone-dark');
    await phone.context.close();

    expect(await Array.fromAsync(new Bun.Glob('*.png').scan(OUT))).toEqual(expect.arrayContaining(['sign-in.png', 'chat.png', 'research.png', 'group.png', 'settings.png', 'admin.png', 'phone-dark.png']));
  }, 180_000);
});
