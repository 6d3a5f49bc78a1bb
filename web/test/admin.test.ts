import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { EMAIL, expectAccessible, startWorld, type World } from './harness';

// A secret the settings table must never show: the AI provider's key.
const SECRET = 'sk-admin-page-secret-4b1d';

let world: World;
beforeAll(async () => {
  world = await startWorld({ env: { PARLEY_AI_API_KEY: SECRET } });
  // The first admin is made with the CLI, as on a real server.
  await world.cli(['user', 'set', '--email', EMAIL, '--admin']);
  await world.createUser('pat@example.org', 'Pat');
}, 240_000);
afterAll(async () => {
  await world?.stop();
});

describe('the admin page', () => {
  test('an admin manages a user, their key and credits, backs up and downloads, and reads doctor and the settings', async () => {
    const { context, page } = await world.signedIn({ acceptDownloads: true });
    await page.getByRole('navigation', { name: 'Places' }).getByRole('link', { name: 'Admin' }).click();
    await page.waitForURL(`${world.url}/admin`);
    const users = page.getByRole('region', { name: 'Users' });
    await users.getByRole('cell', { name: 'pat@example.org', exact: true }).waitFor();
    await expectAccessible(page, 'admin page: users');

    // A new user.
    const add = page.getByRole('form', { name: 'Add a user' });
    await add.getByRole('textbox', { name: 'E-mail' }).fill('zoe@example.org');
    await add.getByRole('textbox', { name: 'Name' }).fill('Zoe');
    await add.getByRole('button', { name: 'Add user' }).click();
    await add.getByText('Created zoe@example.org').waitFor();
    await users.getByRole('cell', { name: 'zoe@example.org', exact: true }).waitFor();
    await page.getByRole('heading', { name: 'Managing zoe@example.org' }).waitFor();

    // A key for Zoe, shown once; it works through the API as Zoe.
    await page.getByRole('textbox', { name: 'Key name' }).fill('phone');
    await page.getByRole('button', { name: 'Create key' }).click();
    const keyBox = page.getByRole('textbox', { name: 'New API key' });
    await keyBox.waitFor();
    const key = await keyBox.inputValue();
    expect(key).toMatch(/^pk_/);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    const session = await fetch(`${world.url}/api/auth/getSession`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: '{}' });
    expect(((await session.json()) as { user: { email: string } }).user.email).toBe('zoe@example.org');
    await page.getByRole('list', { name: 'API keys of zoe@example.org' }).getByText('phone').waitFor();
    await expectAccessible(page, 'admin page: managing a user, a new key');

    // Tier PRO, saved and shown in the list.
    const account = page.getByRole('form', { name: 'Account of zoe@example.org' });
    await account.getByRole('combobox', { name: 'Subscription tier' }).selectOption('PRO');
    await account.getByRole('checkbox', { name: 'Subscription active' }).check();
    await account.getByRole('button', { name: 'Save' }).click();
    await account.getByText('Saved the changes to zoe@example.org.').waitFor();
    const zoeRow = users.getByRole('row').filter({ hasText: 'zoe@example.org' });
    await zoeRow.getByRole('cell', { name: 'PRO', exact: true }).waitFor();
    const asZoe = await fetch(`${world.url}/api/subscription/getStatus`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: '{}' });
    expect(((await asZoe.json()) as { tier: string }).tier).toBe('PRO');

    // Credits.
    const grant = page.getByRole('form', { name: 'Grant credits to zoe@example.org' });
    await grant.getByRole('spinbutton', { name: 'Credits to grant' }).fill('40');
    await grant.getByRole('button', { name: 'Grant credits' }).click();
    await grant.getByText('Bonus balance: 40.').waitFor();
    await zoeRow.getByRole('cell', { name: '40', exact: true }).waitFor();

    // Revoking the key: it stops working.
    await page.getByRole('button', { name: /^Revoke the key phone/ }).click();
    await page.getByText('Revoked the key "phone".').waitFor();
    const revoked = await fetch(`${world.url}/api/auth/getSession`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: '{}' });
    expect(revoked.status).toBe(401);

    // A backup, listed and downloaded: a SQLite file.
    const backups = page.getByRole('region', { name: 'Backups' });
    await backups.getByRole('button', { name: 'Back up now' }).click();
    await backups.getByText(/^Backup parley-.*\.db written/).waitFor({ timeout: 30_000 });
    const download = page.waitForEvent('download');
    await backups.getByRole('list', { name: 'Backups' }).getByRole('button', { name: /^Download the backup of/ }).first().click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^parley-.*\.db$/);
    const bytes = readFileSync((await file.path())!);
    expect(bytes.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
    await expectAccessible(page, 'admin page: backups');

    // Doctor's report.
    const doctor = page.getByRole('region', { name: 'Health checks' });
    await doctor.getByRole('button', { name: 'Run the checks' }).click();
    const results = doctor.getByRole('list', { name: 'Health check results' });
    await results.getByText('data directory').waitFor({ timeout: 60_000 });
    await expect(results.getByRole('listitem').count()).resolves.toBeGreaterThan(3);
    await expectAccessible(page, 'admin page: health checks');

    // Settings: the AI key is masked, its value nowhere on the page.
    const settings = page.getByRole('region', { name: 'Server settings', exact: true });
    const aiKeyRow = settings.getByRole('row').filter({ has: page.getByText('PARLEY_AI_API_KEY', { exact: true }) });
    await aiKeyRow.getByText('********').waitFor();
    await settings.getByRole('row').filter({ has: page.getByText('PARLEY_AI_MODEL', { exact: true }) }).getByText('small', { exact: true }).waitFor();
    expect(await page.content()).not.toContain(SECRET);
    await expectAccessible(page, 'admin page: settings');

    // A phone-sized screen still shows the page without sideways scrolling of the whole page.
    await page.setViewportSize({ width: 380, height: 800 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await context.close();
  }, 120_000);

  test('an admin cannot take away their own admin flag', async () => {
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/admin`);
    await page.getByRole('button', { name: `Manage ${EMAIL}` }).click();
    const own = page.getByRole('form', { name: `Account of ${EMAIL}` }).getByRole('checkbox', { name: 'Admin' });
    await expect(own.isDisabled()).resolves.toBe(true);
    await page.getByText('You cannot remove your own admin flag').waitFor();
    await context.close();
  }, 60_000);

  test('a non-admin sees no Admin link, and /admin tells them it is for admins', async () => {
    const { context, page } = await world.signedIn(undefined, undefined, 'pat@example.org');
    const places = page.getByRole('navigation', { name: 'Places' });
    await places.getByRole('link', { name: 'Settings' }).waitFor();
    await expect(places.getByRole('link', { name: 'Admin' }).count()).resolves.toBe(0);
    await page.goto(`${world.url}/admin`);
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Only admins can see this page.');
    await expect(page.getByRole('region', { name: 'Users' }).count()).resolves.toBe(0);
    await expectAccessible(page, 'admin page refused');
    // The server refuses too, whatever the page shows.
    const status = await page.evaluate(async () => (await fetch('/api/admin/listUsers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status);
    expect(status).toBe(403);
    await context.close();
  }, 60_000);
});
