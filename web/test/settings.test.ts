import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import OpenAI from 'openai';
import { expectAccessible, startWorld, type World } from './harness';

let world: World;
beforeAll(async () => {
  world = await startWorld();
}, 240_000);
afterAll(async () => {
  await world?.stop();
});

const openSettings = async (page: Page) => {
  // On a phone the places are behind the Menu.
  const menu = page.getByRole('button', { name: /^Menu/ });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('navigation', { name: 'Places' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 2 }).waitFor();
};
const section = (page: Page, name: string) => page.getByRole('region', { name, exact: true });
/** Ask the API for the caller's preferences with an API key, as a program would: the status code. */
const useKey = async (key: string) => (await fetch(`${world.url}/api/preferences/get`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: '{}' })).status;
/** The label of the focused control, as a keyboard user hears it. */
const focusedLabel = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLInputElement | null;
    return (el?.labels?.[0]?.textContent ?? el?.getAttribute('aria-label') ?? el?.textContent ?? '').trim();
  });

describe('the settings page in Chromium, through the compiled binary', () => {
  test('preferences are saved on change and kept after a reload; the account shows its tier, type and credits', async () => {
    const { context, page } = await world.signedIn();
    await openSettings(page);
    const prefs = section(page, 'Preferences');
    const memories = prefs.getByRole('checkbox', { name: 'Remember things across conversations' });
    const toolOutput = prefs.getByRole('checkbox', { name: 'Show when memories are saved or changed' });
    await memories.waitFor();
    await expect(memories.isChecked()).resolves.toBe(false); // off unless the user opts in
    await expect(toolOutput.isChecked()).resolves.toBe(false);

    const account = section(page, 'Account');
    await account.getByText('FREE', { exact: true }).waitFor();
    await account.getByText('Bonus credits').waitFor();
    await expectAccessible(page, 'settings');

    await memories.check();
    await prefs.getByRole('status').getByText('Saved').waitFor();
    await account.getByRole('combobox', { name: 'Account type' }).selectOption('STUDENT');
    await account.getByRole('status').getByText('Saved').waitFor();

    await page.reload();
    await memories.waitFor();
    await expect(memories.isChecked()).resolves.toBe(true);
    await expect(toolOutput.isChecked()).resolves.toBe(false);
    await expect(account.getByRole('combobox', { name: 'Account type' }).inputValue()).resolves.toBe('STUDENT');

    await memories.uncheck();
    await prefs.getByRole('status').getByText('Saved').waitFor();
    await page.reload();
    await memories.waitFor();
    await expect(memories.isChecked()).resolves.toBe(false);

    // The Sessions page stays one link away.
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.waitForURL(`${world.url}/sessions`);
    await page.getByText('(this browser)').waitFor();
    await context.close();
  }, 90_000);

  test('the account: a refused change is said in words and undone; a locked type and a paid subscription show as such', async () => {
    const email = 'bob@example.org';
    await world.createUser(email, 'Bob');
    const { context, page } = await world.signedIn(undefined, undefined, email);
    await openSettings(page);
    const account = section(page, 'Account');
    const type = account.getByRole('combobox', { name: 'Account type' });
    await type.waitFor();
    await expect(type.inputValue()).resolves.toBe('GENERAL');

    // An admin locks the choice while the page is open: the server refuses, the page says so.
    await world.cli(['user', 'set', '--email', email, '--locked', '--tier', 'PRO', '--active', '--expires', '2099-01-31', '--product', 'pro.monthly']);
    await type.selectOption('DEVELOPER');
    await account.getByRole('alert').getByText(/^Changing the account type failed/).waitFor();
    await expect(type.inputValue()).resolves.toBe('GENERAL');

    await page.reload();
    await type.waitFor();
    await expect(type.isDisabled()).resolves.toBe(true);
    await account.getByText('Your administrator has set this account type').waitFor();
    await account.getByText('PRO', { exact: true }).waitFor();
    await account.getByText('pro.monthly', { exact: true }).waitFor();
    await account.getByText('Yes', { exact: true }).waitFor();
    await expectAccessible(page, 'settings of a locked, paid account');
    await context.close();
  }, 90_000);

  test('an API key is shown once, works, and stops working once revoked in the page', async () => {
    const { context, page } = await world.signedIn();
    const dialogs: string[] = [];
    page.on('dialog', (d) => (dialogs.push(d.message()), void d.accept()));
    await openSettings(page);
    const keys = section(page, 'API keys');
    await keys.getByRole('textbox', { name: 'Name of the new key' }).fill('Backup script');
    await keys.getByRole('button', { name: 'Create key' }).click();

    const box = keys.getByRole('textbox', { name: 'New API key' });
    await box.waitFor();
    const key = await box.inputValue();
    expect(key.length).toBeGreaterThan(20);
    await keys.getByText('Parley will not show it again').waitFor();
    await expectAccessible(page, 'settings with a key just created');
    await keys.getByRole('button', { name: 'Copy', exact: true }).click();
    await keys.getByRole('status').filter({ hasText: /Copied|copy it with your keyboard/ }).waitFor();

    expect(await useKey(key)).toBe(200);

    await keys.getByRole('button', { name: 'Done' }).click();
    await box.waitFor({ state: 'detached' });
    await expect(page.content()).resolves.not.toContain(key);
    await page.reload();
    const item = keys.getByRole('listitem').filter({ hasText: 'Backup script' });
    await item.waitFor();
    await expect(page.content()).resolves.not.toContain(key); // shown once: not in the list, not after a reload
    await item.getByText(/last used/).waitFor(); // the call above used it

    await keys.getByRole('button', { name: 'Revoke the key "Backup script"' }).click();
    await keys.getByRole('status').getByText('The key "Backup script" was revoked.').waitFor();
    expect(dialogs.at(-1)).toContain('Revoke the key "Backup script"?');
    await item.getByText(/revoked/).waitFor();
    await expect(keys.getByRole('button', { name: 'Revoke the key "Backup script"' }).count()).resolves.toBe(0);
    expect(await useKey(key)).toBe(401);

    // Leaving the page while a key is shown hides it too.
    await keys.getByRole('textbox', { name: 'Name of the new key' }).fill('Left behind');
    await keys.getByRole('button', { name: 'Create key' }).click();
    const second = await box.inputValue();
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.waitForURL(`${world.url}/sessions`);
    await openSettings(page);
    await keys.getByRole('listitem').filter({ hasText: 'Left behind' }).waitFor();
    await expect(box.count()).resolves.toBe(0);
    await expect(page.content()).resolves.not.toContain(second);
    await context.close();
  }, 90_000);

  test('the base URL for OpenAI-compatible apps is shown; with a key made here, the openai SDK lists the models and chats', async () => {
    const { context, page } = await world.signedIn();
    await openSettings(page);
    const keys = section(page, 'API keys');
    const door = keys.getByRole('group', { name: "Use Parley from apps made for OpenAI's API" });
    const baseUrl = await door.getByRole('textbox', { name: 'Base URL for OpenAI-compatible apps' }).inputValue();
    expect(baseUrl).toBe(`${world.url}/v1`);
    await door.getByRole('button', { name: 'Copy the base URL' }).click();
    await door.getByRole('status').filter({ hasText: /Copied|copy it with your keyboard/ }).waitFor();
    await expectAccessible(page, 'settings with the base URL for OpenAI-compatible apps');

    await keys.getByRole('textbox', { name: 'Name of the new key' }).fill('Editor');
    await keys.getByRole('button', { name: 'Create key' }).click();
    const key = await keys.getByRole('textbox', { name: 'New API key' }).inputValue();
    const client = new OpenAI({ baseURL: baseUrl, apiKey: key, maxRetries: 0 });
    const models = (await client.models.list()).data.map((m) => m.id);
    expect(models.length).toBeGreaterThan(0);
    const answer = await client.chat.completions.create({ model: models[0]!, messages: [{ role: 'user', content: 'Hi' }] });
    expect(answer.choices[0]!.message.content).toBeTruthy();
    await context.close();
  }, 90_000);

  test('a key is created with the keyboard alone', async () => {
    const { context, page } = await world.signedIn();
    await openSettings(page);
    await section(page, 'API keys').getByRole('button', { name: 'Create key' }).waitFor();
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await focusedLabel(page)) === 'Name of the new key';
    }
    expect(reached).toBe(true);
    await page.keyboard.type('Typed key');
    await page.keyboard.press('Enter');
    const box = page.getByRole('textbox', { name: 'New API key' });
    await box.waitFor();
    for (let i = 0; i < 20 && (await focusedLabel(page)) !== 'New API key'; i++) await page.waitForTimeout(100);
    expect(await focusedLabel(page)).toBe('New API key'); // the new key takes the focus
    expect(await useKey(await box.inputValue())).toBe(200);
    await page.keyboard.press('Tab');
    expect(await focusedLabel(page)).toBe('Copy');
    await page.keyboard.press('Tab');
    expect(await focusedLabel(page)).toBe('Done');
    await page.keyboard.press('Enter');
    await box.waitFor({ state: 'detached' });
    expect(await focusedLabel(page)).toBe('Name of the new key'); // back where a next key starts
    await section(page, 'API keys').getByRole('listitem').filter({ hasText: 'Typed key' }).waitFor();
    await context.close();
  }, 90_000);

  test('bookmarks: make a group, bookmark the conversation and its answer from the chat (a second group made there), remove one, delete the groups', async () => {
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = () => ({ deltas: [{ content: 'Worth keeping.' }] });
    const { context, page } = await world.signedIn({ viewport: { width: 390, height: 780 }, colorScheme: 'dark' });
    const dialogs: string[] = [];
    page.on('dialog', (d) => (dialogs.push(d.message()), void d.accept()));
    await page.getByRole('textbox', { name: 'Message' }).fill('A chat to bookmark');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/c\/[^/]+$/);
    const conversationId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await page.getByText('Worth keeping.').waitFor();

    await openSettings(page);
    const bookmarks = section(page, 'Bookmarks');
    await bookmarks.getByText('You have no bookmark groups.').waitFor();
    await bookmarks.getByRole('textbox', { name: 'Name of the new group' }).fill('Reading list');
    await bookmarks.getByRole('button', { name: 'Create group' }).click();
    const group = bookmarks.getByRole('group', { name: 'Reading list' });
    await group.getByText('No bookmarks in this group yet.').waitFor();

    // From the chat: the conversation, then its answer, into the group; a second group made there.
    await page.goto(`${world.url}/c/${encodeURIComponent(conversationId)}`);
    await page.getByText('Worth keeping.').waitFor();
    await page.getByRole('button', { name: 'Bookmark conversation' }).click();
    const form = page.getByRole('form', { name: 'Bookmark conversation' });
    await expect(form.getByRole('combobox', { name: 'Into' }).locator('option:checked').textContent()).resolves.toBe('Reading list');
    await expectAccessible(page, 'the bookmark form, phone-sized and dark');
    await form.getByRole('button', { name: 'Bookmark' }).click();
    await page.getByRole('status').filter({ hasText: 'Bookmarked in Reading list.' }).waitFor();
    await page.getByRole('button', { name: 'Bookmark this answer' }).click();
    const answerForm = page.getByRole('form', { name: 'Bookmark this answer' });
    await answerForm.getByRole('combobox', { name: 'Into' }).selectOption({ label: 'A new group…' });
    await answerForm.getByRole('textbox', { name: "New group's name" }).fill('Quotes');
    await answerForm.getByRole('button', { name: 'Bookmark' }).click();
    await page.getByRole('status').filter({ hasText: 'Bookmarked in Quotes.' }).waitFor();

    await openSettings(page);
    const link = group.getByRole('link', { name: 'A chat to bookmark' });
    await link.waitFor();
    await expect(link.getAttribute('href')).resolves.toBe(`/c/${encodeURIComponent(conversationId)}`);
    const quotes = bookmarks.getByRole('group', { name: 'Quotes' });
    await quotes.getByText('(one message)').waitFor();
    await expectAccessible(page, 'settings with a bookmark, phone-sized and dark');

    await group.getByRole('button', { name: 'Remove "A chat to bookmark" from "Reading list"' }).click();
    await link.waitFor({ state: 'detached' });
    await group.getByText('No bookmarks in this group yet.').waitFor();

    await group.getByRole('button', { name: 'Delete the group "Reading list"' }).click();
    await group.waitFor({ state: 'detached' });
    expect(dialogs.at(-1)).toContain('Delete the group "Reading list"');
    await quotes.getByRole('button', { name: 'Delete the group "Quotes"' }).click();
    await quotes.waitFor({ state: 'detached' });
    await page.reload();
    await bookmarks.getByText('You have no bookmark groups.').waitFor(); // gone on the server, not only here
    await context.close();
  }, 90_000);
});
