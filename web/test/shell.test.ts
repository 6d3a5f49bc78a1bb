import { describe, expect, test } from 'bun:test';
import { expectAccessible, waitOrExplain, worldForFile } from './harness';

/**
 * The app as an installed app: its manifest and service worker (Chromium finds nothing against
 * installing it), the shell opening offline and saying so; the keyboard shortcuts' help; and a
 * phone, where the conversation gets the screen under a one-row header with the places behind a
 * menu.
 */
const world = worldForFile();

describe('the app shell', () => {
  test('installable: the manifest and its icons, a service worker in control, nothing Chromium holds against installing; offline the shell opens and says so', async () => {
    const { context, page } = await world.signedIn();
    const manifest = await page.evaluate(async () => {
      const link = document.querySelector<HTMLLinkElement>('link[rel="manifest"]')!;
      return (await fetch(link.href)).json();
    });
    expect(manifest).toMatchObject({ name: 'Parley', start_url: '/', display: 'standalone' });
    const sizes = await page.evaluate(async (icons: { src: string; type: string }[]) => Promise.all(icons.map(async (i) => [i.src, (await fetch(i.src)).headers.get('content-type')])), manifest.icons);
    expect(sizes).toEqual(manifest.icons.map((i: { src: string; type: string }) => [i.src, i.type]));
    await page.waitForFunction(() => navigator.serviceWorker.ready.then(() => true));
    await page.reload();
    await page.waitForFunction(() => !!navigator.serviceWorker.controller);
    const cdp = await context.newCDPSession(page);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    // "in-incognito" is about the test's browser context (Playwright's are off the record), not the app.
    expect(installabilityErrors.filter((e: { errorId: string }) => e.errorId !== 'in-incognito')).toEqual([]);

    await context.setOffline(true);
    await page.reload();
    await waitOrExplain(page, page.getByRole('alert').getByText(/You are offline/));
    await expectAccessible(page, 'the shell offline');
    await context.setOffline(false);
    await page.reload();
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    await context.close();
  });

  test('keyboard shortcuts: ? lists them in a dialog, Escape closes it, / goes to the message box, Alt+R opens research', async () => {
    const { context, page } = await world.signedIn();
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('?');
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await dialog.getByText('Go to the message box').waitFor();
    await expectAccessible(page, 'the shortcuts dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await page.keyboard.press('/');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('message');
    // Typing a "?" in the box is a question mark, not a shortcut.
    await page.keyboard.type('Why?');
    await expect(dialog.isVisible()).resolves.toBe(false);
    await page.keyboard.press('Alt+R');
    await page.waitForURL(`${world.url}/research`);
    await context.close();
  });

  test('a phone gives the conversation the screen: one row of header, the places behind a menu', async () => {
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = () => ({ deltas: [{ content: 'Room to read.' }] });
    const { context, page } = await world.signedIn({ viewport: { width: 390, height: 780 }, colorScheme: 'dark' });
    const header = await page.locator('.topbar').boundingBox();
    expect(header!.height).toBeLessThanOrEqual(56);
    await expect(page.getByRole('navigation', { name: 'Places' }).isVisible()).resolves.toBe(false);
    await page.getByRole('textbox', { name: 'Message' }).fill('Hello from a phone');
    await page.keyboard.press('Enter');
    await page.locator('.message.assistant').getByText('Room to read.').waitFor();
    // The messages take most of the screen.
    const log = await page.getByRole('log', { name: 'Messages' }).boundingBox();
    expect(log!.height).toBeGreaterThan(780 * 0.45);
    const menu = page.getByRole('button', { name: /^Menu/ });
    await menu.click();
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
    await page.getByRole('navigation', { name: 'Places' }).getByRole('link', { name: 'Files' }).waitFor();
    await expectAccessible(page, 'phone, dark, the menu open');
    await page.getByRole('navigation', { name: 'Places' }).getByRole('link', { name: 'Memories' }).click();
    await page.getByRole('heading', { name: 'Memories' }).waitFor();
    await expect(page.getByRole('navigation', { name: 'Places' }).isVisible()).resolves.toBe(false);
    await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
    await context.close();
  });
});
