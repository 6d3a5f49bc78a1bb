import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { BrowserContext, Page } from 'playwright-core';
import { expectAccessible, slowAnswer, startWorld, type World } from './harness';
import { modelList } from '../../test/fakes/openai';

/**
 * Group chats in Chromium, through the compiled binary: Ann (at the server itself) and Bob (behind
 * the proxy whose connections the test cuts) in two browser contexts. The tests run in order and
 * share the group Ann makes in the first one.
 */
let world: World;
let ann: { context: BrowserContext; page: Page };
let bob: { context: BrowserContext; page: Page };
let groupPath = '';

beforeAll(async () => {
  world = await startWorld();
  // The AI server lists two models, so the group's creator has a choice (asked before any page lists them).
  world.ai.gets['/v1/models'] = modelList(['small', 'large']);
  await world.createUser('bob@example.org', 'Bob');
  ann = await world.signedIn({ permissions: ['clipboard-read', 'clipboard-write'] });
  bob = await world.signedIn(undefined, world.flaky.url, 'bob@example.org');
  // Leaving and deleting ask for confirmation; the test says yes (and records what was asked).
  for (const { page } of [ann, bob]) page.on('dialog', (d) => (asked.push(d.message()), void d.accept()));
}, 240_000);
afterAll(async () => {
  await world?.stop();
});
const asked: string[] = [];

const log = (page: Page) => page.getByRole('log', { name: 'Messages' });
/** The members' messages as the reader sees them, in order. */
const texts = (page: Page) => log(page).locator('.group-message .plain').allTextContents();
const write = async (page: Page, text: string) => {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('textbox', { name: 'Message' }).press('Enter');
  await log(page).getByText(text, { exact: true }).waitFor();
};
const panel = (page: Page) => page.getByRole('complementary', { name: 'Members and invite' });

describe('group chats in the web app', () => {
  test('Ann creates a group and an invite link; an unknown invite says so; Bob joins with the link; each sees the other live', async () => {
    const { page } = ann;
    await page.goto(`${world.url}/groups`);
    await page.getByText('No groups yet.', { exact: false }).waitFor();
    await page.getByRole('textbox', { name: "New group's name" }).fill('Family');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.waitForURL(/\/g\/[^/]+$/);
    groupPath = new URL(page.url()).pathname;
    await page.getByRole('heading', { name: 'Family' }).waitFor();
    await panel(page).getByText('Ann').waitFor();
    await expect(panel(page).getByRole('button', { name: 'Leave group' }).count()).resolves.toBe(0); // the creator deletes instead

    await panel(page).getByRole('button', { name: 'Make an invite link' }).click();
    const link = await panel(page).getByRole('textbox', { name: 'Invite link' }).inputValue();
    expect(link).toMatch(new RegExp(`^${world.url}/join/[A-Za-z0-9_-]{16}$`));
    await panel(page).getByRole('button', { name: 'Copy' }).click();
    await panel(page).getByText('Copied.').waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(link);
    await expectAccessible(page, 'a group, with an invite link');

    // Bob's browser reaches Parley through the proxy: the same link at that address.
    const token = link.slice(link.lastIndexOf('/') + 1);
    await bob.page.goto(`${world.flaky.url}/join/not-a-real-invite`);
    await bob.page.getByRole('button', { name: 'Join the group' }).click();
    await bob.page.getByRole('alert').getByText('This invite link has expired or is not valid', { exact: false }).waitFor();
    await bob.page.goto(`${world.flaky.url}/join/${token}`);
    await bob.page.getByRole('heading', { name: 'Join a group' }).waitFor();
    await expectAccessible(bob.page, 'an invite link');
    await bob.page.getByRole('button', { name: 'Join the group' }).click();
    await bob.page.waitForURL(`${world.flaky.url}${groupPath}`);
    await bob.page.getByRole('heading', { name: 'Family' }).waitFor();
    await panel(page).getByText('Bob').waitFor(); // Ann's member list follows the join live

    await write(page, 'Hello Bob, dinner on Sunday?');
    await log(bob.page).getByText('Hello Bob, dinner on Sunday?', { exact: true }).waitFor();
    await write(bob.page, 'Yes! I will bring dessert.');
    await log(page).getByText('Yes! I will bring dessert.', { exact: true }).waitFor();
    // Each sees the other's name on their message, and their own marked as theirs.
    await expect(log(bob.page).locator('.group-message', { hasText: 'Hello Bob' }).locator('.author').textContent()).resolves.toContain('Ann');
    await expect(log(page).locator('.group-message', { hasText: 'Hello Bob' }).locator('.author').textContent()).resolves.toContain('(you)');
    expect(await texts(page)).toEqual(['Hello Bob, dinner on Sunday?', 'Yes! I will bring dessert.']);
    expect(await texts(bob.page)).toEqual(['Hello Bob, dinner on Sunday?', 'Yes! I will bring dessert.']);

    await page.goto(`${world.url}/groups`);
    await page.getByRole('main').getByRole('link', { name: 'Family' }).waitFor();
    await page.getByText('2 members', { exact: false }).waitFor();
    await expectAccessible(page, 'the groups list');
    await page.getByRole('main').getByRole('link', { name: 'Family' }).click();
    await log(page).getByText('Yes! I will bring dessert.', { exact: true }).waitFor(); // the stored messages, loaded again
    expect(await texts(page)).toEqual(['Hello Bob, dinner on Sunday?', 'Yes! I will bring dessert.']);
  }, 120_000);

  test('a message mentioning @ai: both see the assistant answer, marked and in Markdown', async () => {
    world.ai.eventDelayMs = 50;
    world.ai.chatScript = () => ({ deltas: [{ content: 'How about ' }, { content: '**lasagne**' }, { content: ' and a salad?' }] });
    await write(bob.page, '@ai what should we cook?');
    for (const page of [ann.page, bob.page]) {
      const answer = log(page).locator('.group-message.assistant:not([aria-busy])');
      await answer.getByText('How about lasagne and a salad?').waitFor({ timeout: 30_000 });
      await expect(answer.locator('.markdown strong').textContent()).resolves.toBe('lasagne');
      await expect(answer.locator('.author').textContent()).resolves.toContain('AI');
      await expect(log(page).locator('.group-message.assistant').count()).resolves.toBe(1);
    }
    // The assistant read the group's messages, each with its author's name.
    const sent = JSON.stringify(world.ai.requests.at(-1)?.body);
    expect(sent).toContain('what should we cook?');
    expect(sent).toContain('Ann');
  }, 60_000);

  test("Bob's network drops while Ann writes and the assistant answers: after it comes back every message is there once, in order", async () => {
    const expected = slowAnswer(world.ai, 30, 100);
    const before = await texts(bob.page);
    const resumedFrom: string[] = [];
    bob.page.on('request', (r) => r.url().endsWith('/api/groupChat/subscribeToGroup') && resumedFrom.push(r.headers()['last-event-id'] ?? ''));
    await write(ann.page, '@ai count for us');
    await log(bob.page).getByText('w05', { exact: false }).waitFor({ timeout: 30_000 });
    const cut = world.flaky.cut(2500);
    await bob.page.getByText('Connection lost. Reconnecting…').waitFor(); // the stream really broke
    const written = ['While you were away 1', 'While you were away 2', 'While you were away 3'];
    for (const text of written) await write(ann.page, text);
    await cut;
    await log(bob.page).getByText('While you were away 3', { exact: true }).waitFor({ timeout: 30_000 });
    const answers = log(bob.page).locator('.group-message.assistant:not([aria-busy])');
    await answers.getByText(expected).waitFor({ timeout: 30_000 });
    await write(ann.page, 'Back again');
    await log(bob.page).getByText('Back again', { exact: true }).waitFor();
    expect(await texts(bob.page)).toEqual([...before, '@ai count for us', ...written, 'Back again']);
    expect(await texts(bob.page)).toEqual(await texts(ann.page));
    await expect(answers.count()).resolves.toBe(2);
    await expect(answers.last().locator('.markdown').textContent()).resolves.toBe(`${expected}\n`);
    await expect(bob.page.getByText('Connection lost. Reconnecting…').count()).resolves.toBe(0);
    // The page asked the server to go on after the last event it had (a delta of the answer).
    expect(resumedFrom.length).toBeGreaterThan(0);
    expect(resumedFrom.every((id) => /^\d+(\.\d+)?$/.test(id))).toBe(true);
  }, 90_000);

  test("Ann picks the model that answers in the group from the server's list; Bob has no picker; @ai answers with it", async () => {
    const picker = panel(ann.page).getByRole('combobox', { name: 'Model' });
    await expect(picker.inputValue()).resolves.toBe(''); // the server's default
    await expect(picker.locator('option').allTextContents()).resolves.toEqual(["The server's default", 'small', 'large']);
    await expect(panel(bob.page).getByRole('combobox', { name: 'Model' }).count()).resolves.toBe(0);
    const saved = ann.page.waitForResponse((r) => r.url().endsWith('/api/groupChat/setModel') && r.status() === 200);
    await picker.selectOption({ label: 'large' });
    await saved;
    await expectAccessible(ann.page, "a group's panel with its model picker");

    world.ai.eventDelayMs = 0;
    world.ai.chatScript = () => ({ deltas: [{ content: 'The large model here.' }] });
    await write(bob.page, '@ai which model are you?');
    await log(bob.page).locator('.group-message.assistant:not([aria-busy])').getByText('The large model here.').waitFor({ timeout: 30_000 });
    const chats = world.ai.requests.filter((r) => r.path === 'POST /v1/chat/completions');
    expect(chats.at(-1)?.body.model).toBe('large');

    // Kept with the group, as the picker shows it; the server's default can be chosen again.
    const stored = () =>
      ann.page.evaluate(async () => {
        const res = await fetch('/api/groupChat/listGroupChats', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        return ((await res.json()) as { groupChats: { model: string | null }[] }).groupChats[0]?.model;
      });
    await expect(stored()).resolves.toBe('env-ai/large');
    await expect(picker.inputValue()).resolves.toBe('env-ai/large');
    const reset = ann.page.waitForResponse((r) => r.url().endsWith('/api/groupChat/setModel') && r.status() === 200);
    await picker.selectOption('');
    await reset;
    await expect(stored()).resolves.toBeNull();
  }, 60_000);

  test('keyboard only: the message box has focus, Enter sends, Shift+Enter adds a line', async () => {
    const { page } = bob;
    await page.reload();
    await page.getByRole('heading', { name: 'Family' }).waitFor();
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('message');
    await page.keyboard.type('First line');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('second line');
    await page.keyboard.press('Enter');
    await log(ann.page).getByText('First line', { exact: false }).waitFor();
    await expect(log(ann.page).locator('.plain', { hasText: 'First line' }).textContent()).resolves.toBe('First line\nsecond line');
    await expect(page.getByRole('textbox', { name: 'Message' }).inputValue()).resolves.toBe('');
    await expectAccessible(page, 'a group, as a member');
  }, 60_000);

  test('Bob cannot delete the group and leaves it; Ann deletes it', async () => {
    await expect(panel(bob.page).getByRole('button', { name: 'Delete group' }).count()).resolves.toBe(0);
    const status = await bob.page.evaluate(async (id) => {
      const res = await fetch('/api/groupChat/deleteGroupChat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ groupChatId: id }) });
      return res.status;
    }, groupPath.slice(3));
    expect(status).toBe(403);

    await panel(bob.page).getByRole('button', { name: 'Leave group' }).click();
    await bob.page.waitForURL(`${world.flaky.url}/groups`);
    await bob.page.getByText('No groups yet.', { exact: false }).waitFor();
    await panel(ann.page).getByText('Bob').waitFor({ state: 'detached' });

    await panel(ann.page).getByRole('button', { name: 'Delete group' }).click();
    await ann.page.waitForURL(`${world.url}/groups`);
    await ann.page.getByText('No groups yet.', { exact: false }).waitFor();
    expect(asked).toEqual(['Leave "Family"? You need a new invite to come back.', 'Delete "Family" for everyone? Its messages are deleted too.']);
    await ann.page.goto(`${world.url}${groupPath}`);
    await ann.page.getByRole('alert').getByText('This group does not exist, or you are not one of its members.').waitFor();
  }, 60_000);

  test('a phone-sized screen in dark mode: the members and invite panel opens from a button', async () => {
    const { context, page } = await world.signedIn({ viewport: { width: 390, height: 780 }, colorScheme: 'dark' });
    await page.goto(`${world.url}/groups`);
    await page.getByRole('textbox', { name: "New group's name" }).fill('Phone group');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByRole('heading', { name: 'Phone group' }).waitFor();
    await expect(panel(page).getByRole('button', { name: 'Make an invite link' }).isVisible()).resolves.toBe(false);
    await page.getByRole('button', { name: 'Members (1) and invite' }).click();
    await panel(page).getByRole('button', { name: 'Make an invite link' }).click();
    await panel(page).getByRole('textbox', { name: 'Invite link' }).waitFor();
    await expectAccessible(page, 'a group on a phone in dark mode');
    await page.getByRole('button', { name: 'Members (1) and invite' }).click(); // back to the messages
    await write(page, 'Written on a phone');
    await context.close();
  }, 60_000);
});
