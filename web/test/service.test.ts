import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { EMAIL, expectAccessible, startWorld, waitOrExplain, type World } from './harness';

/**
 * The service's pages: news with its unread badge (posted from the CLI and from the Admin
 * page), a support conversation answered from the CLI appearing live (and answered from the
 * Admin page), a mini app opened from the launcher, and "what's new" after an upgrade.
 */
let world: World;
let miniApp: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  world = await startWorld();
  await world.createUser('ada@example.org', 'Ada');
  await world.cli(['user', 'set', '--email', 'ada@example.org', '--admin']);
  // A mini app on this machine (plain http is allowed for localhost).
  miniApp = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<!doctype html><title>Tip calculator</title><h1>Tip calculator</h1>', { headers: { 'content-type': 'text/html' } }) });
}, 240_000);
afterAll(async () => {
  await world?.stop();
  miniApp?.stop(true);
});

describe("the service's pages", () => {
  test('news posted from the CLI shows an unread badge; reading it clears the badge; an admin posts from the Admin page', async () => {
    const { context, page } = await world.signedIn();
    // Posts older than the account read as read: this one comes after Ann's account.
    await world.cli(['news', 'post', '--title', 'Maintenance tonight', '--body', 'Parley restarts at **22:00**.']);
    const news = page.getByRole('navigation', { name: 'Places' }).getByRole('link', { name: /^News/ });
    await page.reload();
    await waitOrExplain(page, news.locator('.badge').getByText('1'));
    await expect(news.getAttribute('aria-current')).resolves.toBeNull();
    await expectAccessible(page, 'the top bar with an unread badge');
    await news.click();
    await page.getByRole('article', { name: /Maintenance tonight/ }).getByText('22:00').waitFor();
    await page.getByRole('article', { name: /Maintenance tonight/ }).getByText('New').waitFor();
    await page.waitForFunction(() => !document.querySelector('.places a[href="/news"] .badge'));
    await expectAccessible(page, 'the news page');

    const admin = await world.signedIn(undefined, undefined, 'ada@example.org');
    await admin.page.goto(`${world.url}/admin`);
    const form = admin.page.getByRole('form', { name: 'Post news' });
    await form.getByRole('textbox', { name: 'Title' }).fill('New apps');
    await form.getByRole('textbox', { name: 'Text (Markdown)' }).fill('Try the *tip calculator*.');
    await form.getByRole('button', { name: 'Post to every user' }).click();
    await admin.page.getByRole('list', { name: 'Posted news' }).getByText('New apps').waitFor();
    await admin.page.getByRole('list', { name: 'Posted news' }).getByText('read by 1').waitFor();
    await page.goto(`${world.url}/`);
    await waitOrExplain(page, news.locator('.badge').getByText('1'));
    await admin.context.close();
    await context.close();
  });

  test('a support conversation: opened in the app, answered from the CLI, the answer appears live; then answered from the Admin page', async () => {
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/support`);
    await page.getByRole('textbox', { name: 'Subject' }).fill('Cannot upload a PDF');
    await page.getByRole('textbox', { name: 'Message' }).fill('It says the type is not accepted.');
    await page.getByRole('button', { name: 'Send to support' }).click();
    await page.waitForURL(/\/support\/[^/]+$/);
    const threadId = page.url().split('/').pop()!;
    await page.getByRole('log', { name: 'Messages' }).getByText('It says the type is not accepted.').waitFor();
    await expectAccessible(page, 'a support conversation');

    await world.cli(['support', 'reply', threadId, '--message', 'Which file is it? Send its name.', '--name', 'Sam']);
    // No reload: the page asks again by itself.
    await waitOrExplain(page, page.getByRole('log', { name: 'Messages' }).getByText('Which file is it? Send its name.'), 20_000);
    await page.getByText('Sam (support)').waitFor();
    await page.getByRole('textbox', { name: 'Your reply' }).fill('harvest.pdf');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('log', { name: 'Messages' }).getByText('harvest.pdf').waitFor();

    const admin = await world.signedIn(undefined, undefined, 'ada@example.org');
    await admin.page.goto(`${world.url}/admin`);
    await admin.page.getByRole('button', { name: `Open "Cannot upload a PDF" from ${EMAIL}` }).click();
    await admin.page.getByRole('group', { name: /Cannot upload a PDF/ }).getByText('harvest.pdf').waitFor();
    await admin.page.getByRole('textbox', { name: 'Your answer' }).fill('Fixed: try again.');
    await admin.page.getByRole('button', { name: 'Send answer' }).click();
    // The support section's own status line: the Admin page says "answered" elsewhere too (a connection's health, a setting's help).
    await admin.page.getByRole('region', { name: 'Support', exact: true }).getByRole('status').getByText(/^Answered/).waitFor();
    await expectAccessible(admin.page, 'the admin answering support');
    await waitOrExplain(page, page.getByRole('log', { name: 'Messages' }).getByText('Fixed: try again.'), 20_000);
    await admin.context.close();
    await context.close();
  });

  test('a mini app added by an admin opens from the launcher in a tab of its own', async () => {
    await world.cli(['miniapps', 'add', '--name', 'Tip calculator', '--url', `http://127.0.0.1:${miniApp.port}/`, '--description', 'Split the bill.']);
    const { context, page } = await world.signedIn();
    await page.getByRole('link', { name: 'Apps' }).click();
    const tile = page.getByRole('link', { name: /Tip calculator/ });
    await tile.getByText('Split the bill.').waitFor();
    await expectAccessible(page, 'the mini app launcher');
    const opened = context.waitForEvent('page');
    await tile.click();
    const app = await opened;
    await app.getByRole('heading', { name: 'Tip calculator' }).waitFor();
    expect(app.url()).toBe(`http://127.0.0.1:${miniApp.port}/`);
    // noopener: the app gets no handle on Parley's page.
    await expect(app.evaluate(() => window.opener)).resolves.toBeNull();
    await context.close();
  });

  test("after an upgrade the app says what's new, and the notes list the running version", async () => {
    const { context, page } = await world.signedIn();
    // The first visit only records the version; a browser that saw an older one is told.
    await page.getByRole('navigation', { name: 'Places' }).getByRole('link', { name: 'Chat' }).waitFor();
    await page.evaluate(() => localStorage.setItem('parley.seenVersion', '0.0.1'));
    await page.reload();
    const banner = page.getByRole('status').filter({ hasText: /Parley was updated to/ });
    await banner.waitFor();
    await banner.getByRole('link', { name: "See what's new" }).click();
    await page.getByRole('heading', { name: "What's new" }).waitFor();
    const version = (await page.getByText(/This server runs Parley /).innerText()).replace(/.*Parley /, '').replace(/\.$/, '');
    await page.getByRole('heading', { name: new RegExp(`^${version.replace(/\./g, '\\.')}`) }).waitFor();
    await expectAccessible(page, "what's new");
    await page.reload();
    await expect(page.getByText(/Parley was updated to/).count()).resolves.toBe(0);
    await context.close();
  });
});
