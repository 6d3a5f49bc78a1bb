import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { EMAIL, expectAccessible, slowAnswer, startWorld, type World } from './harness';

let world: World;
beforeAll(async () => {
  world = await startWorld();
}, 240_000);
afterAll(async () => {
  await world?.stop();
});

/** The text of the last answer in the conversation, as the user reads it. */
const lastAnswer = (page: import('playwright-core').Page) => page.locator('.message.assistant').last();
const answerText = async (page: import('playwright-core').Page) => (await lastAnswer(page).locator('.markdown').textContent())!.trim();

describe('the web app in Chromium, through the compiled binary', () => {
  test('signing in with a login link: the page asks for a click, the click signs in and lands on the app; a used link says so', async () => {
    const context = await world.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${world.url}/`);
    await page.getByRole('heading', { name: 'Sign in to Parley' }).waitFor();
    await expect(page.getByText('parley login-link --email you@example.org').count()).resolves.toBe(1);
    await expectAccessible(page, 'sign-in page');

    const link = await world.loginLink();
    await page.goto(link);
    await expect(page.getByText(`Sign in as ${EMAIL}?`).count()).resolves.toBe(1);
    await expectAccessible(page, 'login link page');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${world.url}/`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await expect(page.getByText('Ann').count()).resolves.toBeGreaterThan(0);
    await expectAccessible(page, 'new chat');

    await page.goto(link);
    await page.getByRole('heading', { name: 'This sign-in link was already used' }).waitFor();
    await expectAccessible(page, 'used login link page');

    await page.goto(`${world.url}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Parley' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Parley' }).waitFor(); // the session really ended
    await context.close();
  }, 60_000);

  test('chat: the answer streams in as Markdown (links cannot run script); rename, search and delete the conversation', async () => {
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = () => ({
      deltas: [
        { content: '**Bold** and `code`.\n\n' },
        { content: '| a | b |\n|---|---|\n| 1 | 2 |\n\n' },
        { content: '[bad](javascript:alert(1)) <img src=x onerror=alert(1)> [good](https://example.org)\n\n' },
        { content: '```\nconst x = 1;\n```\n' },
      ],
    });
    const { context, page } = await world.signedIn();
    const dialogs: string[] = [];
    page.on('dialog', (d) => (dialogs.push(d.message()), void d.accept()));
    await page.getByRole('textbox', { name: 'Message' }).fill('Show me some Markdown');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/c\/[^/]+$/);
    const answer = lastAnswer(page);
    await answer.locator('pre code').waitFor();
    await expect(answer.locator('strong').textContent()).resolves.toBe('Bold');
    await expect(answer.locator('table td').count()).resolves.toBe(2);
    await expect(answer.locator('a[href^="javascript"]').count()).resolves.toBe(0);
    await expect(answer.locator('img').count()).resolves.toBe(0);
    await expect(answer.locator('a[href="https://example.org"]').getAttribute('rel')).resolves.toBe('noopener noreferrer');
    await expectAccessible(page, 'a conversation');

    const list = page.getByRole('navigation', { name: 'Conversations' });
    await list.getByRole('link', { name: 'Show me some Markdown' }).waitFor();
    await list.getByRole('button', { name: 'Rename "Show me some Markdown"' }).click();
    await list.getByRole('textbox', { name: 'New title' }).fill('Markdown demo');
    await list.getByRole('button', { name: 'Save' }).click();
    await list.getByRole('link', { name: 'Markdown demo' }).waitFor();
    await page.reload();
    await list.getByRole('link', { name: 'Markdown demo' }).waitFor(); // stored, not only shown

    await page.getByRole('searchbox', { name: 'Search conversations' }).fill('nothing like it');
    await page.getByText('No conversation matches.').waitFor();
    await page.getByRole('searchbox', { name: 'Search conversations' }).fill('markdown');
    await list.getByRole('link', { name: 'Markdown demo' }).waitFor();

    await list.getByRole('button', { name: 'Delete "Markdown demo"' }).click();
    await page.waitForURL(`${world.url}/`);
    await page.getByRole('searchbox', { name: 'Search conversations' }).fill('');
    await page.getByText('No conversations yet.').waitFor();
    expect(dialogs).toEqual(['Delete "Markdown demo"? Its messages are deleted too.']); // no alert(1) ever ran
    await context.close();
  }, 60_000);

  test('reloading mid-answer, and losing the network mid-answer, continue the answer where it was: no gap, no duplicate', async () => {
    const expected = slowAnswer(world.ai, 40, 120);
    const { context, page } = await world.signedIn(undefined, world.flaky.url);
    const resumes: string[] = [];
    page.on('request', (r) => r.url().endsWith('/api/chat/resumeStream') && resumes.push(r.postData() ?? ''));
    // Every text the answer shows while it is being written, across the reload: once it ends the
    // page shows the stored answer instead, so the streamed text must be judged as it streams.
    const seen: string[] = [];
    await page.exposeFunction('recordAnswer', (text: string) => void seen.push(text.trim()));
    await context.addInitScript(() => {
      new MutationObserver(() => {
        const live = document.querySelector('.message.assistant[aria-busy="true"] .markdown');
        if (live) (globalThis as any).recordAnswer(live.textContent ?? '');
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
    await page.reload(); // the recorder is in place from the page's start
    await page.getByRole('textbox', { name: 'Message' }).fill('Count slowly');
    await page.keyboard.press('Enter');
    await lastAnswer(page).getByText('w05', { exact: false }).waitFor();
    await page.reload();
    // The reloaded page picks the answer up again and it goes on growing.
    await lastAnswer(page).getByText('w15', { exact: false }).waitFor({ timeout: 20_000 });
    await world.flaky.cut(1500); // the stream breaks, and the first retries find no network
    await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 30_000 }); // the answer ended
    expect(await answerText(page)).toBe(expected);
    // No gap and no duplicate: whatever the page showed while streaming was the answer's start,
    // and it showed the whole answer before it ended.
    const wrong = seen.filter((text) => !expected.startsWith(text));
    expect(wrong).toEqual([]);
    expect(seen.at(-1)).toBe(expected);
    // The reload followed the answer from its start; the lost network resumed after the last event it had.
    expect(resumes[0]).toContain('"after":0');
    expect(resumes.slice(1).some((body) => /"after":[1-9]/.test(body))).toBe(true);
    await page.reload();
    await lastAnswer(page).locator('.markdown').waitFor();
    expect(await answerText(page)).toBe(expected); // the stored answer
    await context.close();
  }, 90_000);

  test('stop ends the answer being written', async () => {
    slowAnswer(world.ai, 60, 150);
    const { context, page } = await world.signedIn();
    await page.getByRole('textbox', { name: 'Message' }).fill('Talk for a long time');
    await page.keyboard.press('Enter');
    await lastAnswer(page).getByText('w03', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByText('Stopped.').waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    // The note stays once the stored conversation is shown, and the answer stopped where it was.
    const full = Array.from({ length: 60 }, (_, i) => `w${String(i + 1).padStart(2, '0')}`).join(' ');
    await expect(page.getByText('Stopped.').isVisible()).resolves.toBe(true);
    const kept = await answerText(page);
    expect(full.startsWith(kept) && kept.length < full.length).toBe(true);
    await context.close();
  }, 60_000);

  test('keyboard only: write, send, read the answer, open the conversation list and sign out without a mouse', async () => {
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = () => ({ deltas: [{ content: 'Typed ' }, { content: 'and answered.' }] });
    const { context, page } = await world.signedIn();
    // The message box has focus when the page opens.
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('message');
    await page.keyboard.type('Hello by keyboard');
    await page.keyboard.press('Enter');
    await lastAnswer(page).getByText('Typed and answered.').waitFor();
    // Tab from the top of the page reaches the conversation's link, and Enter opens it.
    await page.goto(`${world.url}/`);
    // As a person would: once the list is there (it loads after the page), not before.
    await page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: 'Hello by keyboard' }).waitFor();
    const focusedName = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.innerText?.trim() ?? '');
    let reached = false;
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    for (let i = 0; i < 20 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await focusedName()) === 'Hello by keyboard';
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/c\/[^/]+$/);
    await lastAnswer(page).getByText('Typed and answered.').waitFor();
    for (let i = 0; i < 50 && (await focusedName()) !== 'Sign out'; i++) await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sign in to Parley' }).waitFor();
    await context.close();
  }, 60_000);

  test('sessions: list where one is signed in, end another browser\'s session, then this one\'s', async () => {
    const other = await world.signedIn({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0' });
    const { context, page } = await world.signedIn();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.waitForURL(`${world.url}/sessions`);
    await page.getByText('(this browser)').waitFor();
    await expectAccessible(page, 'sessions');
    await page.getByRole('button', { name: /^End the session of Firefox on Linux/ }).click();
    await page.getByRole('button', { name: /^End the session of Firefox on Linux/ }).waitFor({ state: 'detached' });
    await other.page.reload();
    await other.page.getByRole('heading', { name: 'Sign in to Parley' }).waitFor(); // that browser is signed out
    await page.getByRole('button', { name: 'End this session (sign out)' }).click();
    await page.getByRole('heading', { name: 'Sign in to Parley' }).waitFor();
    await Promise.all([context.close(), other.context.close()]);
  }, 60_000);

  test('a phone-sized screen in dark mode: the list opens from the top bar; no serious accessibility violation', async () => {
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = () => ({ deltas: [{ content: 'Small screen, dark.' }] });
    const { context, page } = await world.signedIn({ viewport: { width: 390, height: 780 }, colorScheme: 'dark' });
    await expect(page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).resolves.toBe(true);
    await page.getByRole('textbox', { name: 'Message' }).fill('On a phone');
    await page.keyboard.press('Enter');
    await lastAnswer(page).getByText('Small screen, dark.').waitFor();
    await expectAccessible(page, 'phone, dark, a conversation');
    const toggle = page.getByRole('button', { name: 'Conversations' });
    await expect(page.getByRole('navigation', { name: 'Conversations' }).isVisible()).resolves.toBe(false);
    await toggle.click();
    await expect(toggle.getAttribute('aria-expanded')).resolves.toBe('true');
    await page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: 'On a phone' }).waitFor();
    await expectAccessible(page, 'phone, dark, the conversation list');
    await context.close();
  }, 60_000);
});
