import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Transformer } from '@napi-rs/image';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { EMAIL, researchEnv, startWorld, type World } from './harness';
import { startFakeSearxng, type FakeSearxng } from '../../test/fakes/searxng';
import { modelList, startFakeOpenAI } from '../../test/fakes/openai';

/**
 * The screenshots in docs/screenshots/, made by this run (scripts/web/run.sh): the main pages as a
 * person sees them, with content, through the compiled binary. Each shot waits for what the page
 * must show first, so a page that broke fails here instead of leaving a picture of an error.
 */
const OUT = join(import.meta.dir, '..', '..', 'docs', 'screenshots');
const DESKTOP = { viewport: { width: 1200, height: 760 } };

let world: World;
let searx: FakeSearxng;
// A second chat connection for the Admin page's pictures: a laptop's model server.
const laptop = startFakeOpenAI();
laptop.gets['/v1/models'] = modelList(['qwen2.5:7b', 'llama3.2:3b', 'nomic-embed-text']);
beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  searx = startFakeSearxng();
  world = await startWorld({ env: researchEnv(searx.url) });
  world.ai.gets['/v1/models'] = modelList(['small', 'large']);
  await world.cli(['user', 'set', '--email', EMAIL, '--admin']);
  await world.createUser('bob@example.org', 'Bob');
}, 240_000);
afterAll(async () => {
  await world?.stop();
  searx?.stop();
  laptop.stop();
});

const shoot = (page: Page, name: string) => page.screenshot({ path: join(OUT, `${name}.png`) });

const ANSWER = [
  'Here is a plan for **sourdough** at home:\n\n',
  '| Step | Time |\n|---|---|\n| Feed the starter | 8 h |\n| Mix and rest | 1 h |\n| Bake at 230 °C | 40 min |\n\n',
  'Keep the dough covered while it rests:\n\n```python\nhydration = water / flour  # 0.75 is a good start\n```\n\n',
  'With flour $f$ and water $w$ the hydration is\n\n$$h = \\frac{w}{f}$$\n',
];

describe('screenshots of the main pages (docs/screenshots/)', () => {
  test('sign-in, sharing, chat, research, a group, settings, admin (its connections and models), files, memories, news, apps, support, and a phone in dark mode', async () => {
    const signedOut = await world.browser.newContext(DESKTOP);
    const start = await signedOut.newPage();
    await start.goto(`${world.url}/`);
    await start.getByRole('heading', { name: 'Sign in to Parley' }).waitFor();
    await shoot(start, 'sign-in');
    await signedOut.close();

    // Bob offers Ann a conversation: his Share… dialog, then the offer atop Ann's list in the chat's picture.
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = () => ({ deltas: [{ content: 'Plums, butter, flour, sugar and an egg: bake at 180 °C for 45 minutes.' }] });
    const bob = await world.signedIn(DESKTOP, undefined, 'bob@example.org');
    await bob.page.getByRole('textbox', { name: 'Message' }).fill("Grandma's plum cake");
    await bob.page.getByRole('button', { name: 'Send' }).click();
    await bob.page.locator('.message.assistant').getByText('45 minutes').waitFor();
    await bob.page.getByRole('button', { name: 'Share…' }).click();
    await bob.page.getByRole('textbox', { name: 'E-mail address' }).fill(EMAIL);
    await bob.page.getByRole('button', { name: 'Offer to share' }).click();
    await bob.page.getByRole('dialog').getByRole('list', { name: 'Offers not accepted yet' }).getByText(EMAIL).waitFor();
    await shoot(bob.page, 'share');
    await bob.context.close();

    world.ai.chatScript = (body) =>
      body.stream ? { deltas: ANSWER.map((content) => ({ content })) } : { deltas: [{ content: '["sourdough starter", "sourdough baking time"]' }] };
    const { context, page } = await world.signedIn(DESKTOP);
    await page.getByRole('region', { name: 'Offered to you' }).getByText("Grandma's plum cake", { exact: false }).waitFor();
    await page.getByRole('textbox', { name: 'Message' }).fill('How do I bake sourdough bread?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/c\/[^/]+$/);
    await page.locator('.message.assistant pre code .hljs-comment').waitFor();
    await page.locator('.message.assistant .katex-display').waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await page.locator('.message.assistant').getByRole('button', { name: 'Copy', exact: true }).waitFor();
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

    // Connections: the environment's and a laptop's model server added by an admin, both tested.
    await page.evaluate(async (baseUrl) => {
      await fetch('/api/admin/addConnection', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'laptop', kind: 'chat', baseUrl }) });
    }, laptop.url);
    await page.goto(`${world.url}/admin`);
    const connections = page.getByRole('region', { name: 'Connections', exact: true });
    for (const name of ['env-ai', 'laptop']) {
      const item = connections.getByRole('listitem').filter({ has: page.getByRole('heading', { name: new RegExp(`^${name} `) }) });
      await item.getByRole('button', { name: `Test ${name}` }).click();
      await item.getByRole('status').getByText(/^Models: /).waitFor();
    }
    // The section at the top of the page's scrolling area, in a window tall enough for it; the window itself back at its top, so the top bar shows.
    const shootSection = async (heading: string, name: string) => {
      await page.getByRole('heading', { name: heading, exact: true, level: 3 }).evaluate((h) => (h as unknown as { scrollIntoView(o: unknown): void }).scrollIntoView({ block: 'start' }));
      await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
      await shoot(page, name);
    };
    await page.setViewportSize({ width: 1200, height: 1040 });
    await shootSection('Connections', 'admin-connections');
    // Models: one renamed, one being edited, the defaults above.
    const models = page.getByRole('region', { name: 'Models', exact: true });
    await models.getByRole('button', { name: 'Edit laptop/llama3.2:3b' }).click();
    await models.getByRole('textbox', { name: 'Display name' }).fill('Llama 3.2 (3B)');
    await models.getByRole('button', { name: 'Save model' }).click();
    await models.getByRole('rowheader', { name: /^Llama 3\.2 \(3B\)/ }).waitFor();
    await models.getByRole('button', { name: 'Edit laptop/qwen2.5:7b' }).click();
    await models.getByRole('form', { name: 'Model laptop/qwen2.5:7b' }).waitFor();
    await shootSection('Models', 'admin-models');
    await page.setViewportSize(DESKTOP.viewport);

    await page.goto(`${world.url}/files`);
    await page.locator('#upload-file').setInputFiles([
      { name: 'garden-notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Garden notes\n\nPrune the quince in February.\n') },
      { name: 'recipes.csv', mimeType: 'text/csv', buffer: Buffer.from('dish,minutes\nsourdough,240\nsalad,10\n') },
    ]);
    await page.getByRole('button', { name: 'Preview garden-notes.md' }).click();
    await page.locator('.preview-text').getByText('Prune the quince').waitFor();
    await shoot(page, 'files');

    await page.goto(`${world.url}/memories`);
    for (const fact of ['Is vegetarian', 'Bakes sourdough on Sundays']) {
      await page.getByRole('textbox', { name: 'Something to remember' }).fill(fact);
      await page.getByRole('button', { name: 'Add memory' }).click();
      await page.getByRole('list', { name: 'Your memories' }).getByText(fact).waitFor();
    }
    await shoot(page, 'memories');

    // A shared assistant made with the CLI (its avatar drawn here), and one of Ann's own, listed.
    const avatar = join(OUT, '..', '..', 'dist', 'screenshot-avatar.png');
    const side = 96;
    const px = new Uint8Array(side * side * 4).map((_, i) => [60, 140 + ((i >> 2) % side), 90, 255][i % 4]!);
    mkdirSync(join(avatar, '..'), { recursive: true });
    writeFileSync(avatar, await Transformer.fromRgbaPixels(px, side, side).png());
    await world.cli(['assistant', 'create', '--name', 'Garden helper', '--description', 'Plants, soil and the seasons.', '--instructions', 'Answer as a patient gardener.', '--starter', 'When do I prune roses?', '--temperature', '0.4', '--avatar', avatar]);
    await page.goto(`${world.url}/assistants`);
    await page.getByRole('button', { name: 'New assistant' }).click();
    const form = page.getByRole('form', { name: 'New assistant' });
    await form.getByLabel('Name').fill('Sourdough coach');
    await form.getByLabel('Description').fill('Feeding, shaping and baking schedules.');
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('list', { name: 'Your assistants' }).getByText('Sourdough coach').waitFor();
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('.assistant-list img')].some((img) => img.complete && img.naturalWidth > 0));
    await shoot(page, 'assistants');

    await world.cli(['news', 'post', '--title', 'New: files and voice', '--body', 'Upload documents, ask about them, and talk to Parley.']);
    await world.cli(['miniapps', 'add', '--name', 'Tip calculator', '--url', 'https://tips.example.org/', '--description', 'Split the bill.']);
    await world.cli(['miniapps', 'add', '--name', 'Timer', '--url', 'https://timer.example.org/', '--description', 'Kitchen timers.']);
    await page.goto(`${world.url}/news`);
    await page.getByRole('article', { name: /New: files and voice/ }).waitFor();
    await shoot(page, 'news');
    await page.goto(`${world.url}/apps`);
    await page.getByRole('link', { name: /Timer/ }).waitFor();
    await shoot(page, 'apps');
    await page.goto(`${world.url}/support`);
    await page.getByRole('textbox', { name: 'Subject' }).fill('Keeping a recipe');
    await page.getByRole('textbox', { name: 'Message' }).fill('How do I keep a conversation as a file?');
    await page.getByRole('button', { name: 'Send to support' }).click();
    await page.waitForURL(/\/support\/[^/]+$/);
    await world.cli(['support', 'reply', page.url().split('/').pop()!, '--message', 'Open it and press Export as Markdown: the file is yours to keep.', '--name', 'Sam']);
    await page.getByText('the file is yours to keep').waitFor({ timeout: 20_000 });
    await shoot(page, 'support');
    await context.close();

    const phone = await world.signedIn({ viewport: { width: 390, height: 780 }, colorScheme: 'dark' });
    await phone.page.getByRole('button', { name: 'Conversations' }).click();
    await phone.page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: 'How do I bake sourdough bread?' }).click();
    await phone.page.locator('.message.assistant pre code').waitFor();
    // Nothing wider than the phone: the long code line scrolls inside its block.
    await expect(phone.page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
    await shoot(phone.page, 'phone-dark');
    await phone.page.getByRole('button', { name: /^Menu/ }).click();
    await phone.page.getByRole('navigation', { name: 'Places' }).getByRole('link', { name: 'Files' }).waitFor();
    await shoot(phone.page, 'phone-menu');
    await phone.context.close();

    expect(await Array.fromAsync(new Bun.Glob('*.png').scan(OUT))).toEqual(expect.arrayContaining(['sign-in.png', 'share.png', 'chat.png', 'research.png', 'group.png', 'settings.png', 'admin.png', 'admin-connections.png', 'admin-models.png', 'files.png', 'memories.png', 'news.png', 'apps.png', 'support.png', 'phone-dark.png', 'phone-menu.png']));
  }, 180_000);
});
