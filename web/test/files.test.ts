import { describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { Transformer } from '@napi-rs/image';
import { expectAccessible, waitOrExplain, worldForFile, type World } from './harness';

/**
 * Files in the web app: a PDF dropped on the chat, sent with a question and read by the model
 * (the fake calls `read_file`), the reading shown in the answer with the document cited; a
 * pasted image and a chosen file uploaded; the library: list, search, preview, download, delete,
 * the quota used.
 */
async function pdfOf(text: string): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  pdf.addPage().drawText(text, { x: 50, y: 700, size: 12, font });
  return pdf.save();
}

/** A file put in the page (as the browser would have it from a drop or a paste), as a DataTransfer. */
const transferOf = (page: Page, bytes: Uint8Array, name: string, type: string) =>
  page.evaluateHandle(
    ({ b64, name, type }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name, { type }));
      return dt;
    },
    { b64: Buffer.from(bytes).toString('base64'), name, type },
  );

const chatBodies = (world: World) => world.ai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);

const world = worldForFile({ env: { PARLEY_AI_TOOLS: 'on' } });

describe('files in the web app', () => {
  test('a PDF dropped on the chat is uploaded, sent with the question, read by the model, and cited in the answer', async () => {
    const { context, page } = await world.signedIn();
    const pdf = await pdfOf('Harvest report: the orchard gave 412 crates of quince.');
    const dt = await transferOf(page, pdf, 'harvest.pdf', 'application/pdf');
    await page.locator('.chat').dispatchEvent('dragenter', { dataTransfer: dt });
    await page.getByText('Drop files to send them with your message').waitFor();
    await page.locator('.chat').dispatchEvent('drop', { dataTransfer: dt });
    const chip = page.getByRole('list', { name: 'Files to send' }).getByRole('listitem');
    await waitOrExplain(page, chip.filter({ hasText: 'harvest.pdf' }).filter({ hasText: /\d+ (B|kB|MB)/ }));
    await expectAccessible(page, 'a file ready to send');

    // The model reads the document it is told about, by the id the message names.
    let turn = 0;
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = (body) => {
      if (!body.stream) return { deltas: [{ content: 'Title' }] };
      const named = JSON.stringify(body.messages).match(/file id ([0-9a-f-]{36})/)?.[1];
      return turn++ === 0 && named
        ? { deltas: [{ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ fileId: named }) } }] }], finish_reason: 'tool_calls' }
        : { deltas: [{ content: 'The orchard gave **412 crates**.' }] };
    };
    await page.getByRole('textbox', { name: 'Message' }).fill('How many crates?');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.locator('.message.assistant').last();
    await waitOrExplain(page, answer.getByText('412 crates'));
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await answer.getByRole('list', { name: 'What the assistant did' }).getByText('Read harvest.pdf').waitFor();
    await expect(answer.getByRole('region', { name: 'Documents read' }).getByRole('link', { name: 'harvest.pdf' }).getAttribute('href')).resolves.toMatch(/^\/api\/files\/[^/]+\/content$/);
    await expect(answer.locator('.model-name').innerText()).resolves.toBe('small');
    // The model got the PDF's text back from read_file.
    const toolResult = chatBodies(world).flatMap((b) => b.messages).find((m: any) => m.role === 'tool' || /412 crates of quince/.test(JSON.stringify(m.content ?? '')));
    expect(JSON.stringify(toolResult)).toContain('412 crates of quince');
    // The message shows the file it was sent with; after a reload too, with the citation.
    await page.locator('.message.user').getByRole('link', { name: 'harvest.pdf' }).waitFor();
    await page.reload();
    await page.locator('.message.assistant').last().getByRole('region', { name: 'Documents read' }).getByRole('link', { name: 'harvest.pdf' }).waitFor();
    await expect(page.locator('.message.assistant').last().locator('.model-name').innerText()).resolves.toBe('small');
    await expectAccessible(page, 'an answer that read a document');
    await context.close();
  });

  test('a pasted image and a chosen file are uploaded; the library lists, searches, previews, downloads and deletes them, with the quota used', async () => {
    const { context, page } = await world.signedIn();
    const image = await Transformer.fromRgbaPixels(new Uint8Array(16 * 16 * 4).fill(200), 16, 16).png();
    const pasted = await transferOf(page, image, 'screenshot.png', 'image/png');
    // A paste as the browser fires it: a ClipboardEvent carrying the file (a screenshot copied).
    await page.getByRole('textbox', { name: 'Message' }).evaluate((box, dt) => box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt as DataTransfer, bubbles: true, cancelable: true })), pasted);
    await waitOrExplain(page, page.getByRole('list', { name: 'Files to send' }).getByText('screenshot.png'));

    await page.goto(`${world.url}/files`);
    await page.getByRole('heading', { name: 'Files', exact: true }).waitFor();
    await page.locator('#upload-file').setInputFiles({ name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Garden notes\n\nThe quince tree needs pruning in February.\n') });
    const list = page.getByRole('list', { name: 'Your files' });
    await waitOrExplain(page, list.getByRole('button', { name: 'Preview notes.md' }));
    await list.getByRole('button', { name: 'Preview screenshot.png' }).waitFor();
    await page.getByText(/^Used .+ of .+ · 3 of \d+ files/).waitFor();

    // Search by words (no embeddings server: "By meaning" is not offered).
    await expect(page.getByRole('combobox', { name: 'Search by' }).locator('option').allInnerTexts()).resolves.toEqual(['By words']);
    await page.getByRole('searchbox', { name: 'Search your documents' }).fill('pruning');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await waitOrExplain(page, page.getByRole('region', { name: 'Search results' }).getByRole('button', { name: 'notes.md' }));

    await list.getByRole('button', { name: 'Preview notes.md' }).click();
    await page.getByRole('region', { name: 'notes.md' }).locator('.preview-text').getByText('needs pruning in February').waitFor();
    await expect(list.getByRole('link', { name: 'Download notes.md' }).getAttribute('download')).resolves.toBe('notes.md');
    const download = page.waitForEvent('download');
    await list.getByRole('link', { name: 'Download notes.md' }).click();
    expect((await download).suggestedFilename()).toBe('notes.md');
    await expectAccessible(page, 'the file library with a preview');

    page.once('dialog', (d) => void d.accept());
    await list.getByRole('button', { name: 'Delete notes.md' }).click();
    await page.getByRole('status').getByText('Deleted notes.md.').waitFor();
    await expect(list.getByRole('button', { name: 'Preview notes.md' }).count()).resolves.toBe(0);
    await context.close();
  });
});
