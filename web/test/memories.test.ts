import { describe, expect, test } from 'bun:test';
import { expectAccessible, toolThenAnswer, waitOrExplain, worldForFile } from './harness';

/**
 * Memories in the web app: add, edit and forget one, forget all; the Settings wording says what
 * the server does; with "Show when memories are saved or changed" on, an answer shows the
 * memory the assistant saved.
 */
const world = worldForFile({ env: { PARLEY_AI_TOOLS: 'on' } });

describe('memories in the web app', () => {
  test('add, edit, forget one and forget all', async () => {
    const { context, page } = await world.signedIn();
    await page.getByRole('link', { name: 'Memories' }).click();
    await page.getByRole('heading', { name: 'Memories' }).waitFor();
    await page.getByText('Nothing remembered yet.').waitFor();
    // Memories are off for a new account: the page says so, and they can be managed anyway.
    await page.getByText('The assistant does not use memories now').waitFor();
    const box = page.getByRole('textbox', { name: 'Something to remember' });
    for (const fact of ['I am vegetarian', 'I write in French']) {
      await box.fill(fact);
      await page.getByRole('button', { name: 'Add memory' }).click();
      await page.getByRole('list', { name: 'Your memories' }).getByText(fact).waitFor();
    }
    await expectAccessible(page, 'the memories page');
    await page.getByRole('button', { name: 'Edit the memory "I am vegetarian"' }).click();
    await page.getByRole('textbox', { name: 'Edit the memory' }).fill('I am vegan');
    await page.getByRole('button', { name: 'Save' }).click();
    const list = page.getByRole('list', { name: 'Your memories' });
    await list.getByText('I am vegan').waitFor();
    // The edited one is the most recently updated: first.
    await expect(list.locator('.memory-text').allInnerTexts()).resolves.toEqual(['I am vegan', 'I write in French']);
    await page.getByRole('button', { name: 'Forget the memory "I write in French"' }).click();
    await page.getByRole('status').getByText('The memory was forgotten.').waitFor();
    await expect(list.locator('.memory-text').allInnerTexts()).resolves.toEqual(['I am vegan']);
    await page.reload();
    await page.getByRole('list', { name: 'Your memories' }).getByText('I am vegan').waitFor();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Forget everything' }).click();
    await page.getByText('Nothing remembered yet.').waitFor();
    await context.close();
  });

  test('Settings says what memories do; with their notes on, an answer shows the memory saved', async () => {
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/settings`);
    const hint = page.locator('#pref-enableMemories-hint');
    await expect(hint.innerText()).resolves.toContain('uses them in later chats and research');
    await expect(page.locator('.settings').innerText()).resolves.not.toMatch(/does not yet/);
    for (const name of ['Remember things across conversations', 'Show when memories are saved or changed']) {
      await page.getByRole('checkbox', { name }).check();
      await page.getByRole('status').getByText('Saved').first().waitFor();
    }
    toolThenAnswer(world.ai, 'save_memory', { content: 'Has a cat called Miso' }, 'I will remember Miso.');
    await page.goto(`${world.url}/`);
    await page.getByRole('textbox', { name: 'Message' }).fill('My cat is called Miso');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.locator('.message.assistant').last();
    await waitOrExplain(page, answer.getByText('I will remember Miso.'));
    await answer.getByRole('list', { name: 'What the assistant did' }).getByText('Saved a memory').waitFor();
    await answer.getByText('Has a cat called Miso').waitFor();
    await page.goto(`${world.url}/memories`);
    await page.getByRole('list', { name: 'Your memories' }).getByText('Has a cat called Miso').waitFor();
    await page.getByText('The assistant uses these memories').waitFor();
    await context.close();
  });
});
