import { describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { EMAIL, expectAccessible, waitOrExplain, worldForFile } from './harness';

/**
 * Assistants in a group (docs/groups.md, "Assistants in a group"), in Chromium through the compiled
 * binary: Ann, an admin, shares two assistants, makes a group, picks one for @ai in the group's
 * panel and mentions the other from the buttons under the message box; each answer is signed
 * with the name of the assistant that wrote it, also after a reload.
 */
const world = worldForFile({}, async (w) => {
  await w.cli(['user', 'set', '--email', EMAIL, '--admin']);
});

/** An API call from the page, as the signed-in user. */
const api = (page: Page, path: string, body: unknown) =>
  page.evaluate(
    async ([path, body]) => {
      const res = await fetch(`/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    },
    [path, body] as const,
  );

describe('assistants in a group, in the web app', () => {
  test("the creator picks the group's assistant for @ai; a shared assistant is mentioned from its button; answers carry their names", async () => {
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/groups`);
    const made: Record<string, string> = {};
    for (const a of [{ name: 'Chef', instructions: 'Answer with a recipe.' }, { name: 'Travel Planner', instructions: 'Plan trips.' }]) {
      const res = await api(page, 'assistants/create', { shared: true, ...a });
      expect(res.status).toBe(200);
      made[a.name] = res.body.assistant.id;
    }
    // Chef has an avatar (a one-pixel PNG, made a 128-pixel WebP); Travel Planner has none.
    const pixel = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    expect((await api(page, 'assistants/setAvatar', { assistantId: made.Chef, dataUrl: pixel })).status).toBe(200);
    await page.reload();
    // The fake model answers with the name its system prompt gives it.
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = (body) => ({ deltas: [{ content: `${/^You are @([^,]+),/.exec(body.messages[0].content)?.[1] ?? 'someone'} answers.` }] });

    await page.getByRole('textbox', { name: "New group's name" }).fill('Supper club');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByRole('heading', { name: 'Supper club' }).waitFor();
    const panel = page.getByRole('complementary', { name: 'Members and invite' });
    const picker = panel.getByRole('combobox', { name: 'Answers @ai' });
    await waitOrExplain(page, picker);
    await expect(picker.locator('option').allTextContents()).resolves.toEqual(['Parley', 'Chef', 'Travel Planner']);
    const saved = page.waitForResponse((r) => r.url().endsWith('/api/groupChat/setAssistant') && r.status() === 200);
    await picker.selectOption({ label: 'Chef' });
    await saved;
    await expectAccessible(page, "a group's panel with its assistant picker");

    const log = page.getByRole('log', { name: 'Messages' });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('@ai what is for dinner?');
    await box.press('Enter');
    const answers = log.locator('.group-message.assistant:not([aria-busy])');
    await waitOrExplain(page, answers.getByText('Chef answers.'));
    await expect(answers.first().locator('.author strong').textContent()).resolves.toBe('Chef');
    // Its avatar beside its name, as in a chat, served by the avatar's own URL.
    const avatar = answers.first().locator('.author img.assistant-avatar');
    await avatar.waitFor();
    expect(await avatar.getAttribute('src')).toContain(`/api/assistants/${made.Chef}/avatar`);
    await expect(avatar.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).resolves.toBe(128);
    expect(world.ai.requests.at(-1)?.body.messages[0].content).toContain('Answer with a recipe.');

    // The buttons under the box offer the shared assistants; a mention being typed narrows them,
    // and a click completes it.
    await page.getByRole('button', { name: '@Chef' }).waitFor();
    await box.fill('Hi @tra');
    await page.getByRole('button', { name: '@Chef' }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: '@Travel Planner' }).click();
    await expect(box.inputValue()).resolves.toBe('Hi @Travel Planner ');
    await page.keyboard.type('a weekend in Lyon?');
    await page.keyboard.press('Enter');
    await waitOrExplain(page, answers.getByText('Travel Planner answers.'));
    await expect(answers.nth(1).locator('.author strong').textContent()).resolves.toBe('Travel Planner');
    await expect(answers.nth(1).locator('img').count()).resolves.toBe(0);
    await expectAccessible(page, 'a group with answers by two assistants');

    // Parley's own again for @ai; the answers already written keep their names after a reload.
    const reset = page.waitForResponse((r) => r.url().endsWith('/api/groupChat/setAssistant') && r.status() === 200);
    await picker.selectOption({ label: 'Parley' });
    await reset;
    await box.fill('@ai and dessert?');
    await box.press('Enter');
    await waitOrExplain(page, answers.getByText('ai answers.', { exact: true }));
    await page.reload();
    await waitOrExplain(page, answers.nth(2));
    await expect(answers.locator('.author strong').allTextContents()).resolves.toEqual(['Chef', 'Travel Planner', 'Assistant']);
    await context.close();
  }, 120_000);

  test('a member who did not create the group reads who answers @ai, has no picker, and gets the mention buttons', async () => {
    const ann = await world.signedIn();
    await ann.page.goto(`${world.url}/groups`);
    const chef = (await api(ann.page, 'assistants/list', {})).body.assistants.find((a: { name: string }) => a.name === 'Chef');
    const group = (await api(ann.page, 'groupChat/createGroupChat', { name: 'Book club' })).body;
    expect((await api(ann.page, 'groupChat/setAssistant', { groupChatId: group.id, assistantId: chef.id })).status).toBe(200);
    const { code } = (await api(ann.page, 'groupChat/createInvite', { groupChatId: group.id })).body;

    await world.createUser('bob@example.org', 'Bob');
    const bob = await world.signedIn(undefined, undefined, 'bob@example.org');
    await bob.page.goto(`${world.url}/groups`);
    expect((await api(bob.page, 'groupChat/joinGroup', { code })).status).toBe(200);
    await bob.page.goto(`${world.url}/g/${group.id}`);
    const panel = bob.page.getByRole('complementary', { name: 'Members and invite' });
    await waitOrExplain(bob.page, panel.getByText('@ai is answered by Chef.'));
    await expect(panel.getByRole('combobox', { name: 'Answers @ai' }).count()).resolves.toBe(0);
    await bob.page.getByRole('button', { name: '@Chef' }).waitFor();
    await bob.page.getByRole('button', { name: '@Travel Planner' }).waitFor();
    await expectAccessible(bob.page, "a group's page for a member, with the mention buttons");
    await ann.context.close();
    await bob.context.close();
  }, 120_000);
});
