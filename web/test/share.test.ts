import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { BrowserContext, Page } from 'playwright-core';
import { expectAccessible, startWorld, waitOrExplain, type World } from './harness';

/**
 * Sharing a conversation, in Chromium through the compiled binary: Ann offers conversations from
 * their Share… dialog, Bob (another browser context) sees the offers at the top of his list,
 * declines one, accepts another and writes in it. An offer to an address nobody has reads the same
 * to Ann; a group chat's conversation has no Share…. The tests run in order and share the users.
 */
let world: World;
let ann: { context: BrowserContext; page: Page };
let bob: { context: BrowserContext; page: Page };
const asked: string[] = [];

beforeAll(async () => {
  world = await startWorld();
  await world.createUser('bob@example.org', 'Bob');
  ann = await world.signedIn();
  bob = await world.signedIn(undefined, undefined, 'bob@example.org');
  // Declining asks first; the test says yes and keeps the question.
  for (const { page } of [ann, bob]) page.on('dialog', (d) => (asked.push(d.message()), void d.accept()));
  world.ai.eventDelayMs = 0;
  world.ai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'Noted: **done**.' }] } : { deltas: [{ content: 'Title' }] });
}, 240_000);
afterAll(async () => {
  await world?.stop();
});

const list = (page: Page) => page.getByRole('navigation', { name: 'Conversations' });
const offers = (page: Page) => list(page).getByRole('region', { name: 'Offered to you' });
const shareDialog = (page: Page) => page.getByRole('dialog', { name: /^Share/ });
const sentOffers = (page: Page) => shareDialog(page).getByRole('list', { name: 'Offers not accepted yet' });

/** A new conversation with one exchange; resolves with its id once the answer is stored. */
async function converse(page: Page, text: string): Promise<string> {
  await page.goto(`${world.url}/`);
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForURL(/\/c\/[^/]+$/);
  await page.locator('.message.assistant').last().getByText('Noted:').waitFor();
  await page.getByRole('button', { name: 'Send' }).waitFor();
  return page.url().split('/').pop()!;
}

/** Offer the open conversation to `email` from its dialog (opened if it is not); resolves with the confirmation. */
async function offer(page: Page, email: string): Promise<string> {
  if (!(await shareDialog(page).isVisible())) await page.getByRole('button', { name: 'Share…' }).click();
  await shareDialog(page).getByRole('textbox', { name: 'E-mail address' }).fill(email);
  await shareDialog(page).getByRole('button', { name: 'Offer to share' }).click();
  const status = shareDialog(page).getByRole('status');
  await status.getByText(`Offered to ${email}.`, { exact: false }).waitFor();
  return (await status.textContent())!;
}

let gardenId = '';
let recipesId = '';

describe('sharing a conversation in the web app', () => {
  test('Ann offers a conversation; an address nobody has gets the same confirmation; the offers are listed and one withdrawn; all from the keyboard', async () => {
    const { page } = ann;
    gardenId = await converse(page, 'Plan the spring garden');

    // From the keyboard: the button, then the address field has focus; Enter offers, Escape closes.
    await page.getByRole('button', { name: 'Share…' }).focus();
    await page.keyboard.press('Enter');
    await shareDialog(page).waitFor();
    await expect(shareDialog(page).getByRole('heading', { name: 'Share “Plan the spring garden”' }).count()).resolves.toBe(1);
    await shareDialog(page).getByText('None.').waitFor();
    await expect(page.evaluate(() => (globalThis as any).document.activeElement?.id)).resolves.toBe('share-email');
    // The dialog's words never suggest the address was found.
    const words = await shareDialog(page).textContent();
    expect(words).toContain("If someone has an account with this address, they'll see your offer and can accept it.");
    await expectAccessible(page, 'the share dialog, no offers yet');

    await page.keyboard.type('bob@example.org');
    await page.keyboard.press('Enter');
    const toBob = await shareDialog(page).getByRole('status').getByText('Offered to bob@example.org.', { exact: false }).textContent();
    await sentOffers(page).getByText('bob@example.org').waitFor();

    // Nobody has this address: the same words, and it is listed as Bob's offer is.
    const toNobody = await offer(page, 'nobody@example.org');
    expect(toNobody.replace('nobody@example.org', 'X')).toBe(toBob!.replace('bob@example.org', 'X'));
    await sentOffers(page).getByText('nobody@example.org').waitFor();
    await expect(sentOffers(page).getByRole('listitem').count()).resolves.toBe(2);
    await expectAccessible(page, 'the share dialog with two offers');

    await sentOffers(page).getByRole('button', { name: 'Withdraw the offer to nobody@example.org' }).click();
    await shareDialog(page).getByRole('status').getByText('The offer to nobody@example.org is withdrawn.').waitFor();
    await expect(sentOffers(page).getByRole('listitem').count()).resolves.toBe(1);
    await expect(page.evaluate(() => (globalThis as any).document.activeElement?.id)).resolves.toBe('share-email');

    await page.keyboard.press('Escape');
    await shareDialog(page).waitFor({ state: 'hidden' });
    await expect(page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).resolves.toBe('Share…');

    recipesId = await converse(page, 'Holiday recipes');
    await offer(page, 'bob@example.org');
    await page.keyboard.press('Escape');
  }, 120_000);

  test('Bob sees both offers, declines one and accepts the other, which opens; he writes in it and Ann reads it', async () => {
    const { page } = bob;
    await page.goto(`${world.url}/`);
    await waitOrExplain(page, offers(page).getByText('Holiday recipes'));
    const items = offers(page).getByRole('listitem');
    await expect(items.count()).resolves.toBe(2);
    await expect(items.first().textContent()).resolves.toContain('Ann (ann@example.org) offers you “Holiday recipes”');
    // A pending offer gives nothing: neither conversation is in Bob's list yet.
    await expect(list(page).locator('.conversation-list li').count()).resolves.toBe(0);
    await expectAccessible(page, 'the conversation list with two offers');

    await offers(page).getByRole('button', { name: 'Decline "Plan the spring garden" from Ann' }).click();
    await offers(page).getByText('Plan the spring garden').waitFor({ state: 'detached' });
    expect(asked.at(-1)).toContain('Ann is not told');

    await offers(page).getByRole('button', { name: 'Accept "Holiday recipes" from Ann' }).click();
    await page.waitForURL(`${world.url}/c/${recipesId}`);
    await page.locator('.message.user').getByText('Holiday recipes').waitFor();
    await offers(page).waitFor({ state: 'detached' }); // no offer left: the section goes
    const entry = list(page).locator('.conversation-list li', { hasText: 'Holiday recipes' });
    await entry.getByText('Shared with you').waitFor();
    await expect(list(page).getByRole('link', { name: 'Holiday recipes Shared with you', exact: true }).count()).resolves.toBe(1);
    await expect(entry.getByRole('button', { name: /^Delete/ }).count()).resolves.toBe(0); // only its owner deletes it
    await expect(list(page).getByText('Plan the spring garden').count()).resolves.toBe(0); // declined: not his
    // In the conversation: no Share…, and what he may do.
    await page.getByText('Shared with you: you can read and write here', { exact: false }).waitFor();
    await expect(page.getByRole('button', { name: 'Share…' }).count()).resolves.toBe(0);
    await expectAccessible(page, 'a conversation shared with the user');

    await page.getByRole('textbox', { name: 'Message' }).fill('Add a plum cake, please');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.message.assistant').nth(1).getByText('Noted:').waitFor();

    await ann.page.goto(`${world.url}/c/${recipesId}`);
    await ann.page.locator('.message.user').getByText('Add a plum cake, please').waitFor();
    // Accepted: no longer an offer in Ann's list; the declined one is listed as before (a decline looks like no answer).
    await ann.page.getByRole('button', { name: 'Share…' }).click();
    await shareDialog(ann.page).getByText('None.').waitFor();
    await ann.page.keyboard.press('Escape');
    await ann.page.goto(`${world.url}/c/${gardenId}`);
    await ann.page.getByRole('button', { name: 'Share…' }).click();
    await sentOffers(ann.page).getByText('bob@example.org').waitFor();
    await ann.page.keyboard.press('Escape');
  }, 120_000);

  test('an offer made while the page is open shows when the tab comes back; on a phone in dark mode the list button counts it and the dialog fits', async () => {
    await bob.page.goto(`${world.url}/`);
    await list(bob.page).getByRole('link', { name: /Holiday recipes/ }).waitFor();
    await expect(offers(bob.page).count()).resolves.toBe(0);
    const phone = await world.signedIn({ viewport: { width: 390, height: 780 }, colorScheme: 'dark' });
    try {
      phone.page.on('dialog', (d) => void d.accept());
      await converse(phone.page, 'Bike trip in June');
      await phone.page.getByRole('button', { name: 'Share…' }).click();
      await shareDialog(phone.page).getByText('None.').waitFor();
      const box = (await shareDialog(phone.page).boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
      await offer(phone.page, 'bob@example.org');
      await expectAccessible(phone.page, 'the share dialog on a phone in dark mode');
    } finally {
      await phone.context.close();
    }

    // The tab comes back into view: the offers are asked again.
    await bob.page.evaluate(() => (globalThis as any).document.dispatchEvent(new Event('visibilitychange')));
    await offers(bob.page).getByText('Bike trip in June').waitFor();

    const bobPhone = await world.signedIn({ viewport: { width: 390, height: 780 }, colorScheme: 'dark' }, undefined, 'bob@example.org');
    try {
      const { page } = bobPhone;
      await page.getByRole('button', { name: /^Conversations.*1 offered to you$/ }).click();
      await offers(page).getByText('Bike trip in June').waitFor();
      await expect(page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
      await expectAccessible(page, 'the conversation list with an offer, on a phone in dark mode');
      await offers(page).getByRole('button', { name: 'Accept "Bike trip in June" from Ann' }).click();
      await page.waitForURL(/\/c\/[^/]+$/);
      await page.locator('.message.user').getByText('Bike trip in June').waitFor();
      await expect(page.getByRole('button', { name: 'Conversations', exact: true }).count()).resolves.toBe(1);
    } finally {
      await bobPhone.context.close();
    }
  }, 120_000);

  test("a group chat's conversation has no Share…, and says how its people join; the server refuses to share it", async () => {
    const { page } = ann;
    await page.goto(`${world.url}/groups`);
    await page.getByRole('textbox', { name: "New group's name" }).fill('Neighbours');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.waitForURL(/\/g\/[^/]+$/);
    const groupId = page.url().split('/').pop()!;
    const conversationId = await page.evaluate(async (id) => {
      const res = await fetch('/api/chat/listConversations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      return ((await res.json()).conversations as { id: string; groupChatId: string | null }[]).find((c) => c.groupChatId === id)!.id;
    }, groupId);
    await page.goto(`${world.url}/c/${conversationId}`);
    const note = page.getByText("This is a group chat's conversation: people join it by an invite from", { exact: false });
    await note.waitFor();
    await expect(page.getByRole('button', { name: 'Share…' }).count()).resolves.toBe(0);
    await expectAccessible(page, "a group chat's conversation");
    const refused = await page.evaluate(async (id) => {
      const res = await fetch('/api/chat/shareConversation', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ conversationId: id, email: 'bob@example.org' }) });
      return res.status;
    }, conversationId);
    expect(refused).toBe(409);
    await note.getByRole('link', { name: "its group's page" }).click();
    await page.waitForURL(`${world.url}/g/${groupId}`);
    await page.getByRole('heading', { name: 'Neighbours' }).waitFor();
  }, 60_000);
});
