import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { expectAccessible, startWorld, waitOrExplain, type World } from './harness';
import { modelList } from '../../test/fakes/openai';
import { zeroPng } from '../../test/support/image-bombs';
import { Transformer } from '@napi-rs/image';

/** The text of the last user message the fake model server was sent. */
function lastUserText(body: any): string {
  const user = [...(body?.messages ?? [])].reverse().find((m: any) => m.role === 'user');
  if (!user) return '';
  return typeof user.content === 'string' ? user.content : user.content.filter((p: any) => p.type === 'text').map((p: any) => p.text).join('');
}
/** Every chat request the fake received, newest last. */
const chatRequests = (world: World) => world.ai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const userTexts = (body: any) => body.messages.filter((m: any) => m.role === 'user').map((m: any) => (typeof m.content === 'string' ? m.content : m.content));
/** The fake answers each message by quoting it, so the page shows which message was answered. */
const quoteUser = (world: World) => {
  world.ai.eventDelayMs = 0;
  world.ai.chatScript = (body) => ({ deltas: [{ content: 'Answer to: ' }, { content: lastUserText(body) }] });
};

const answers = (page: Page) => page.locator('.message.assistant .markdown');
const answerTexts = async (page: Page) => (await answers(page).allInnerTexts()).map((t) => t.trim());
const userMessages = (page: Page) => page.locator('.message.user');

async function say(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByText(`Answer to: ${text}`).waitFor();
  await page.getByRole('button', { name: 'Send' }).waitFor(); // the answer ended and is stored
}

/** The width and height a JPEG declares in its start-of-frame segment. */
function jpegSize(bytes: Buffer): { width: number; height: number } {
  for (let i = 2; i < bytes.length; ) {
    const marker = bytes[i + 1]!;
    if (marker >= 0xc0 && marker <= 0xc3) return { height: bytes.readUInt16BE(i + 5), width: bytes.readUInt16BE(i + 7) };
    i += 2 + bytes.readUInt16BE(i + 2);
  }
  throw new Error('no frame in the JPEG');
}

describe('chat extras with a model server that lists two models', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
    world.ai.gets['/v1/models'] = modelList(['small', 'large']);
  }, 240_000);
  afterAll(async () => {
    await world?.stop();
  });

  test('edit a message and continue: the later turns go, the edited text is answered (and stored); Cancel restores it', async () => {
    quoteUser(world);
    const { context, page } = await world.signedIn();
    await say(page, 'First question');
    await say(page, 'Second question');
    await expect(userMessages(page).count()).resolves.toBe(2);

    const first = userMessages(page).first();
    await first.getByRole('button', { name: 'Edit' }).click();
    const box = page.getByRole('textbox', { name: 'Edit your message' });
    await expect(box.inputValue()).resolves.toBe('First question');
    await box.fill('Something else');
    await expectAccessible(page, 'a message being edited');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect(box.count()).resolves.toBe(0);
    await expect(first.getByText('First question', { exact: true }).count()).resolves.toBe(1);

    await first.getByRole('button', { name: 'Edit' }).click();
    await box.fill('First question, edited');
    await page.getByRole('button', { name: 'Save and send' }).click();
    // The answer, or whatever the page says went wrong (then the failure names it).
    await waitOrExplain(page, page.getByText('Answer to: First question, edited').or(page.getByRole('alert')).first());
    await expect(page.getByRole('alert').allTextContents()).resolves.toEqual([]);
    await page.getByText('Answer to: First question, edited').waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await expect(page.getByText('Second question').count()).resolves.toBe(0);
    // The model was asked about the edited message alone: the old turns were not in its history.
    expect(userTexts(chatRequests(world).at(-1))).toEqual(['First question, edited']);
    await page.reload();
    await answers(page).first().waitFor();
    await expect(userMessages(page).allInnerTexts()).resolves.toEqual([expect.stringContaining('First question, edited')]);
    await expect(answerTexts(page)).resolves.toEqual(['Answer to: First question, edited']);
    await context.close();
  }, 90_000);

  test('edit ten times in a row, as fast as a script types: each edit replaces the text, none is added to the old one', async () => {
    // The edit box once put the caret at the end a frame after it opened, so text selected and
    // typed over at once was added to the old text ("edit 1edit 2"); it failed within three edits.
    quoteUser(world);
    const { context, page } = await world.signedIn();
    await say(page, 'edit 0');
    for (let i = 1; i <= 10; i++) {
      await userMessages(page).first().getByRole('button', { name: 'Edit' }).click();
      await page.getByRole('textbox', { name: 'Edit your message' }).fill(`edit ${i}`);
      await page.getByRole('button', { name: 'Save and send' }).click();
      await waitOrExplain(page, page.getByText(`Answer to: edit ${i}`, { exact: true }));
      await page.getByRole('button', { name: 'Send' }).waitFor();
    }
    expect(userTexts(chatRequests(world).at(-1))).toEqual(['edit 10']);
    await context.close();
  }, 90_000);

  test('branch from the first answer: a new conversation with the first exchange only, linked to its parent, in the list', async () => {
    quoteUser(world);
    const { context, page } = await world.signedIn();
    await say(page, 'Branch me');
    await say(page, 'A later turn');
    const parentUrl = page.url();
    await page.locator('.message.assistant').first().getByRole('button', { name: 'Branch from here' }).click();
    await page.waitForURL((url) => /\/c\/[^/]+$/.test(url.pathname) && url.href !== parentUrl);
    const link = page.getByRole('link', { name: 'Branch me' }).and(page.locator('.branched-from a'));
    await link.waitFor();
    await expect(page.getByText('Branched from').count()).resolves.toBe(1);
    await answers(page).first().waitFor();
    await expect(userMessages(page).allInnerTexts()).resolves.toEqual([expect.stringContaining('Branch me')]);
    await expect(answerTexts(page)).resolves.toEqual(['Answer to: Branch me']);
    // The list shows both: the parent and its branch (a branch keeps its parent's title).
    const list = page.getByRole('navigation', { name: 'Conversations' });
    await list.getByRole('link', { name: 'Branch me' }).nth(1).waitFor();
    await link.click();
    await page.waitForURL(parentUrl);
    await page.getByText('Answer to: A later turn').waitFor();
    await expect(page.getByText('Branched from').count()).resolves.toBe(0);
    await context.close();
  }, 90_000);

  test('the model picker: the chosen model answers, and the choice is remembered in this browser', async () => {
    quoteUser(world);
    const { context, page } = await world.signedIn();
    const picker = page.getByRole('combobox', { name: 'Model' });
    await picker.waitFor();
    await expect(picker.inputValue()).resolves.toBe('env-ai/small');
    await expect(picker.locator('option').allInnerTexts()).resolves.toEqual(['small', 'large']);
    await picker.selectOption({ label: 'large' });
    await say(page, 'Which model are you?');
    expect(chatRequests(world).at(-1).model).toBe('large');
    await page.reload();
    await expect(page.getByRole('combobox', { name: 'Model' }).inputValue()).resolves.toBe('env-ai/large');
    await page.getByRole('combobox', { name: 'Model' }).selectOption({ label: 'small' });
    await say(page, 'And now?');
    expect(chatRequests(world).at(-1).model).toBe('small');
    await context.close();
  }, 90_000);

  test('keyboard only: reach Edit, Escape gives the text back, then edit and send with Enter', async () => {
    quoteUser(world);
    const { context, page } = await world.signedIn();
    await say(page, 'Typed first');
    const focused = () => page.evaluate(() => {
      const el = (globalThis as any).document.activeElement;
      return { tag: el?.tagName as string, text: (el?.innerText ?? '').trim() as string, label: el?.closest('label')?.innerText?.trim() as string | undefined };
    });
    // From the message box, Shift+Tab walks back through the messages' buttons to Edit.
    await page.getByRole('textbox', { name: 'Message' }).focus();
    for (let i = 0; i < 10 && (await focused()).text !== 'Edit'; i++) await page.keyboard.press('Shift+Tab');
    expect((await focused()).text).toBe('Edit');
    await page.keyboard.press('Enter');
    await expect(focused()).resolves.toMatchObject({ tag: 'TEXTAREA', label: 'Edit your message' });
    await page.keyboard.type(' and changed');
    await page.keyboard.press('Escape');
    await expect(focused()).resolves.toMatchObject({ text: 'Edit' }); // back where the user was
    await expect(userMessages(page).first().innerText()).resolves.toContain('Typed first');
    await expect(page.getByText('Typed first and changed').count()).resolves.toBe(0);

    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Typed again');
    await page.keyboard.press('Enter');
    await page.getByText('Answer to: Typed again').waitFor();
    expect(userTexts(chatRequests(world).at(-1))).toEqual(['Typed again']);
    // The file input is in the tab order too (its label is the visible button).
    await page.getByRole('textbox', { name: 'Message' }).focus();
    let attach = false;
    for (let i = 0; i < 5 && !attach; i++) {
      await page.keyboard.press('Tab');
      attach = await page.evaluate(() => (globalThis as any).document.activeElement?.id === 'attach-image');
    }
    expect(attach).toBe(true);
    await context.close();
  }, 90_000);
});

describe('chat extras with a vision model and a server that lists no models', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ env: { PARLEY_AI_VISION: 'on' } });
  }, 240_000);
  afterAll(async () => {
    await world?.stop();
  });

  test('no model picker; an attached PNG is previewed, sent scaled down as JPEG, and shown in the message', async () => {
    quoteUser(world);
    const { context, page } = await world.signedIn();
    // Asked from the page itself (a response awaited across the reload could be the old page's,
    // whose body is gone once it navigates).
    const listed = await page.evaluate(async () => (await fetch('/api/chat/listModels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json());
    expect(listed).toMatchObject({ models: [{ id: 'env-ai/small', name: 'small', connection: 'env-ai', available: true }], default: 'env-ai/small' });
    await page.reload();
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    await expect(page.getByRole('combobox', { name: 'Model' }).count()).resolves.toBe(0);

    const png = zeroPng({ width: 2400, height: 1200, colorType: 2 });
    await page.getByLabel('Attach image').setInputFiles({ name: 'wide.png', mimeType: 'image/png', buffer: Buffer.from(png) });
    await page.getByRole('img', { name: 'Image 1 to send' }).waitFor();
    await expectAccessible(page, 'an image chosen to send');
    // Removable: remove it, choose it again.
    await page.getByRole('button', { name: 'Remove image 1' }).click();
    await expect(page.getByRole('img', { name: 'Image 1 to send' }).count()).resolves.toBe(0);
    await page.getByLabel('Attach image').setInputFiles({ name: 'wide.png', mimeType: 'image/png', buffer: Buffer.from(png) });
    await page.getByRole('img', { name: 'Image 1 to send' }).waitFor();

    await say(page, 'What is in this picture?');
    const content = chatRequests(world).at(-1).messages.at(-1).content;
    expect(content[0]).toEqual({ type: 'text', text: 'What is in this picture?' });
    expect(content[1].type).toBe('image_url');
    const url: string = content[1].image_url.url;
    expect(url.startsWith('data:image/jpeg;base64,')).toBe(true);
    expect(jpegSize(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64'))).toEqual({ width: 1536, height: 768 });
    // The stored message shows its image after a reload.
    await page.reload();
    await page.getByRole('img', { name: 'Attached image 1' }).waitFor();
    const conversation = page.url();
    await context.close();

    // On a phone-sized screen in dark mode: the image, the edit box and the composer's tools.
    const phone = await world.signedIn({ viewport: { width: 390, height: 780 }, colorScheme: 'dark' });
    await phone.page.goto(conversation);
    await phone.page.getByRole('img', { name: 'Attached image 1' }).waitFor();
    await phone.page.getByRole('button', { name: 'Edit' }).click();
    await phone.page.getByRole('textbox', { name: 'Edit your message' }).waitFor();
    await phone.page.getByLabel('Attach image').setInputFiles({ name: 'wide.png', mimeType: 'image/png', buffer: Buffer.from(png) });
    await phone.page.getByRole('img', { name: 'Image 1 to send' }).waitFor();
    await expectAccessible(phone.page, 'phone, dark, editing a message with an image');
    await phone.context.close();
  }, 90_000);

  test('an image the browser cannot decode (TIFF) is converted by the server first, then sent as JPEG', async () => {
    quoteUser(world);
    const { context, page } = await world.signedIn();
    const tiff = new Transformer(Buffer.from(zeroPng({ width: 640, height: 480, colorType: 2 }))).tiffSync();
    const converted = page.waitForResponse((r) => r.url().endsWith('/api/images/convertImage'));
    await page.getByLabel('Attach image').setInputFiles({ name: 'scan.tiff', mimeType: 'image/tiff', buffer: tiff });
    expect((await converted).status()).toBe(200);
    await page.getByRole('img', { name: 'Image 1 to send' }).waitFor();
    await say(page, 'And this scan?');
    const url: string = chatRequests(world).at(-1).messages.at(-1).content[1].image_url.url;
    expect(jpegSize(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64'))).toEqual({ width: 640, height: 480 });
    await context.close();
  }, 60_000);
});
