import { describe, expect, test } from 'bun:test';
import { expectAccessible, waitOrExplain, worldForFile } from './harness';

/**
 * Assistants in the web app (docs/assistants.md): the picker under the chat offers the user's own
 * and shared assistants; the chosen one's starters show on an empty chat; its instructions reach
 * the model; the conversation then says who answers, also after a reload.
 */
const world = worldForFile();

describe('assistants in the web app', () => {
  test('pick an assistant, start from a starter, the model gets its instructions, the conversation keeps it', async () => {
    const { context, page } = await world.signedIn();
    // Made through the API, as a client would (the editor page is not built yet).
    const made = await page.evaluate(async () => {
      const res = await fetch('/api/assistants/create', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Tea sommelier', description: 'Knows every tea.', instructions: 'Always recommend a tea.', starters: ['Which tea for breakfast?'] }),
      });
      return res.status;
    });
    expect(made).toBe(200);
    await page.reload();
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'Assam, strong.' }] } : { deltas: [{ content: 'Title' }] });

    const picker = page.getByRole('combobox', { name: 'Assistant' });
    await waitOrExplain(page, picker);
    await picker.selectOption({ label: 'Tea sommelier' });
    const starters = page.getByRole('region', { name: 'Start with Tea sommelier' });
    await starters.getByText('Knows every tea.').waitFor();
    await expectAccessible(page, 'an empty chat with an assistant chosen');
    await starters.getByRole('button', { name: 'Which tea for breakfast?' }).click();
    await waitOrExplain(page, page.locator('.message.assistant').last().getByText('Assam, strong.'));
    const streamed = world.ai.requests.filter((r) => r.body?.stream).at(-1)!.body;
    expect(streamed.messages[0].content).toContain('Always recommend a tea.');
    expect(streamed.messages.at(-1).content).toBe('Which tea for breakfast?');

    await page.getByText('Answering: Tea sommelier').waitFor();
    await page.reload();
    await waitOrExplain(page, page.getByText('Answering: Tea sommelier'));
    await expect(page.getByRole('combobox', { name: 'Assistant' }).count()).resolves.toBe(0);
    await context.close();
  });
});
