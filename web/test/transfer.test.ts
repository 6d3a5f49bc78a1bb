import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Download, Page } from 'playwright-core';
import { expectAccessible, waitOrExplain, worldForFile } from './harness';

/**
 * Conversations out and in: one exported as Markdown and as JSON from its page, all exported
 * from Settings, the JSON imported back (on another account), a real-shaped ChatGPT export
 * (`conversations.json`: a tree of nodes per conversation) imported along its current branch,
 * and a file past the cap on imported conversations.
 */
const CHATGPT = join(import.meta.dir, 'fixtures', 'chatgpt-conversations.json');
const text = async (d: Download) => readFileSync((await d.path())!, 'utf8');
const list = (page: Page) => page.getByRole('navigation', { name: 'Conversations' });

// Caps low enough to reach in a test: four imported conversations a user, and two imports a
// second (the client waits past the rate limit; it stops at the cap).
const world = worldForFile({ env: { PARLEY_IMPORTS_MAX_PER_USER: '4', PARLEY_RATE_LIMIT_WRITE: '2/s' } }, async (w) => {
  await w.createUser('bob@example.org', 'Bob');
  await w.createUser('cy@example.org', 'Cy');
});

describe('export and import', () => {
  test('export one conversation as Markdown and JSON, all from Settings, and import the JSON on another account', async () => {
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'Bake at **230 °C** for 40 minutes.' }] } : { deltas: [{ content: 'Title' }] });
    const { context, page } = await world.signedIn();
    await page.getByRole('textbox', { name: 'Message' }).fill('How hot should the oven be?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.message.assistant').getByText('230 °C').waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor();

    let download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export as Markdown' }).click();
    const md = await text(await download);
    expect(md).toContain('## You\n\nHow hot should the oven be?');
    expect(md).toContain('## Parley\n\nBake at **230 °C** for 40 minutes.');
    download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export as JSON' }).click();
    const one = JSON.parse(await text(await download));
    expect(one.format).toBe('parley.conversations');
    expect(one.conversations[0].messages.map((m: any) => [m.role, m.content])).toEqual([
      ['user', 'How hot should the oven be?'],
      ['assistant', 'Bake at **230 °C** for 40 minutes.'],
    ]);

    await page.goto(`${world.url}/settings`);
    download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export all as JSON' }).click();
    // Read now: the download goes with its browser context.
    const all = await text(await download);
    expect(JSON.parse(all).conversations.map((c: any) => c.title)).toEqual(['How hot should the oven be?']);
    await page.getByText('Exported 1 conversation(s).').waitFor();
    await expectAccessible(page, 'settings with export and import');
    await context.close();

    const bob = await world.signedIn(undefined, undefined, 'bob@example.org');
    await bob.page.goto(`${world.url}/settings`);
    await bob.page.locator('#import-file').setInputFiles({ name: 'parley-conversations.json', mimeType: 'application/json', buffer: Buffer.from(all) });
    await waitOrExplain(bob.page, bob.page.getByText('Imported 1 conversation(s).'));
    await list(bob.page).getByRole('link', { name: 'How hot should the oven be?' }).click();
    await bob.page.locator('.message.assistant').getByText('230 °C').waitFor();
    await bob.context.close();
  });

  test("a ChatGPT export: each conversation along the branch the user last saw, without system and tool messages; an empty one skipped", async () => {
    const { context, page } = await world.signedIn(undefined, undefined, 'bob@example.org');
    await page.goto(`${world.url}/settings`);
    await page.locator('#import-file').setInputFiles(CHATGPT);
    await waitOrExplain(page, page.getByText('Imported 2 conversation(s); 1 without messages were skipped.'));
    await list(page).getByRole('link', { name: 'Sourdough starter help' }).click();
    await page.locator('.message.assistant').last().getByText('1:1:1 ratio').waitFor();
    await expect(page.locator('.message').evaluateAll((els) => els.map((e) => [e.classList.contains('user') ? 'user' : 'assistant', (e.querySelector('.plain, .markdown') as HTMLElement).innerText.trim()]))).resolves.toEqual([
      ['user', 'My starter smells like nail polish. Is it dead?'],
      ['assistant', 'No, it is hungry: that smell is acetone from a starving starter. Feed it twice a day.'],
      ['user', 'How much flour and water, by weight?'],
      ['assistant', 'Use a 1:1:1 ratio: 50 g starter, 50 g flour, 50 g water.'],
    ]);
    // The image part is not brought in; its text is.
    await list(page).getByRole('link', { name: 'Image of a quince' }).click();
    await page.locator('.message.user').getByText('What fruit is this?').waitFor();
    await context.close();
  });

  test('a file past the cap on imported conversations: those before it stay, and the server\'s sentence says which cap stopped it; the rate limit only slows it', async () => {
    const at = '2024-05-01T10:00:00.000Z';
    const recipes = Array.from({ length: 6 }, (_, i) => ({
      id: `r${i}`,
      title: `Recipe ${i + 1}`,
      createdAt: at,
      updatedAt: at,
      messages: [
        { role: 'user', content: `Recipe ${i + 1}, please.`, createdAt: at },
        { role: 'assistant', content: 'Flour, water, salt.', createdAt: at },
      ],
    }));
    const { context, page } = await world.signedIn(undefined, undefined, 'cy@example.org');
    await page.goto(`${world.url}/settings`);
    const file = JSON.stringify({ format: 'parley.conversations', version: 1, conversations: recipes });
    await page.locator('#import-file').setInputFiles({ name: 'recipes.json', mimeType: 'application/json', buffer: Buffer.from(file) });
    // Four in, past two a second: without waiting out the rate limit the third would have stopped it.
    await waitOrExplain(
      page,
      page
        .getByRole('alert')
        .getByText(
          'Imported 4 of 6 conversation(s). Importing "Recipe 5" failed: You keep 4 imported conversations: the most this server allows is 4 (PARLEY_IMPORTS_MAX_PER_USER). Delete imported conversations you no longer need first (chat/deleteConversation).',
        ),
    );
    for (const n of [1, 2, 3, 4]) await list(page).getByRole('link', { name: `Recipe ${n}` }).waitFor();
    expect(await list(page).getByRole('link', { name: 'Recipe 5' }).count()).toBe(0);
    await expectAccessible(page, 'settings after an import stopped by a cap');
    await context.close();
  });
});
