/**
 * Admin → MCP servers and Settings → MCP servers in Chromium, through the compiled binary, against
 * a real MCP server from npm (server-everything over streamable HTTP on loopback): the admin adds
 * and tests it and lets users add their own; a user sees it offered, and their own server on a
 * private address is refused in words; one on a public address is turned off and on, and made to
 * ask first, from its row.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { EMAIL, expectAccessible, startWorld, type World } from './harness';
import { startEverythingHttp, type RunningServer } from '../../test/support/mcp-servers';

let world: World;
let everything: RunningServer;
beforeAll(async () => {
  everything = await startEverythingHttp();
  world = await startWorld();
  await world.cli(['user', 'set', '--email', EMAIL, '--admin']);
  await world.createUser('pat@example.org', 'Pat');
}, 240_000);
afterAll(async () => {
  await world?.stop();
  everything?.stop();
});

describe('MCP servers in the web app', () => {
  test('the admin adds and tests a server and lets users add their own; a user sees it offered and their own on a private address refused', async () => {
    const admin = await world.signedIn();
    const page = admin.page;
    await page.getByRole('navigation', { name: 'Places' }).getByRole('link', { name: 'Admin' }).click();
    await page.waitForURL(`${world.url}/admin`);
    const section = page.getByRole('region', { name: 'MCP servers' });
    await section.getByText('No MCP servers.').waitFor();

    const form = section.getByRole('form', { name: 'Add an MCP server' });
    await form.getByRole('textbox', { name: 'Name' }).fill('everything');
    await form.getByRole('textbox', { name: 'Address' }).fill(everything.url);
    await form.getByRole('button', { name: 'Add' }).click();
    await section.getByRole('status').getByText('Added everything.').waitFor();
    const list = section.getByRole('list', { name: 'MCP servers' });
    await list.getByText(everything.url).waitFor();

    await list.getByRole('button', { name: 'Test everything' }).click();
    await section.getByRole('status').getByText(/^everything: streamable-http, protocol [0-9-]+, \d+ ms, \d+ tools \(.*echo/).waitFor();
    await list.getByText(/tools, [0-9-]+$/).waitFor();

    await section.getByRole('checkbox', { name: 'Users may add their own remote servers' }).check();
    await expectAccessible(page, 'admin page: MCP servers');
    await admin.context.close();

    const pat = await world.signedIn(undefined, undefined, 'pat@example.org');
    const menu = pat.page.getByRole('button', { name: /^Menu/ });
    if (await menu.isVisible()) await menu.click();
    await pat.page.getByRole('navigation', { name: 'Places' }).getByRole('link', { name: 'Settings' }).click();
    const mine = pat.page.getByRole('region', { name: 'MCP servers' });
    await mine.getByRole('list', { name: 'MCP servers' }).getByText('offered by the admin').waitFor();
    await mine.getByRole('button', { name: 'Test everything' }).click();
    await mine.getByRole('status').getByText(/^everything: streamable-http/).waitFor();

    const own = mine.getByRole('form', { name: 'Add your own MCP server' });
    await own.getByRole('textbox', { name: 'Name' }).fill('mine');
    await own.getByRole('textbox', { name: 'Address' }).fill(everything.url);
    await own.getByRole('button', { name: 'Add' }).click();
    await mine.getByRole('alert').getByText(/private or local address; this server does not let users add MCP servers there\.$/).waitFor();
    await expectAccessible(pat.page, 'settings: MCP servers');

    // Once the admin allows this machine too, it is added: turned off and back on, and made to ask
    // first, from its row.
    const again = await world.signedIn();
    await again.page.goto(`${world.url}/admin`);
    const allow = again.page.getByRole('region', { name: 'MCP servers' }).getByRole('checkbox', { name: /on this machine or the LAN too/ });
    const saved = again.page.waitForResponse((r) => r.url().endsWith('/api/admin/setMcpSettings') && r.ok());
    await allow.check();
    await saved;
    await again.context.close();
    // What was typed is still in the form after the refusal: Add again.
    await expect(own.getByRole('textbox', { name: 'Address' }).inputValue()).resolves.toBe(everything.url);
    await own.getByRole('button', { name: 'Add' }).click();
    await mine.getByRole('status').getByText('Added mine.').waitFor();
    const row = mine.getByRole('list', { name: 'MCP servers' }).getByRole('listitem').filter({ hasText: everything.url });
    await row.getByRole('checkbox', { name: 'mine on' }).uncheck();
    await mine.getByRole('status').getByText('mine is off now.').waitFor();
    await row.getByText('· off').waitFor();
    await row.getByRole('checkbox', { name: "Ask before mine's tools" }).check();
    await mine.getByRole('status').getByText("mine's tools ask first now.").waitFor();
    await pat.page.reload();
    await expect(row.getByRole('checkbox', { name: 'mine on' }).isChecked()).resolves.toBe(false);
    await expect(row.getByRole('checkbox', { name: "Ask before mine's tools" }).isChecked()).resolves.toBe(true);
    await row.getByRole('checkbox', { name: 'mine on' }).check();
    await mine.getByRole('status').getByText('mine is on now.').waitFor();
    await expectAccessible(pat.page, 'settings: your own MCP server');
    await pat.context.close();
  }, 120_000);
});
