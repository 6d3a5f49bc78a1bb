import { describe, expect, test } from 'bun:test';
import { Transformer } from '@napi-rs/image';
import { expectAccessible, waitOrExplain, worldForFile } from './harness';
import { modelList } from '../../test/fakes/openai';

/**
 * Assistants in the web app (docs/assistants.md): the picker under the chat offers the user's own
 * and shared assistants; the chosen one's starters show on an empty chat; its instructions reach
 * the model; the conversation then says who answers, also after a reload.
 */
// Two models, so the chat has a model picker beside the assistant picker.
const world = worldForFile({}, async (w) => {
  w.ai.gets['/v1/models'] = modelList(['small', 'large']);
});
const streamedRequests = () => world.ai.requests.filter((r) => r.path === 'POST /v1/chat/completions' && r.body?.stream).map((r) => r.body);

describe('assistants in the web app', () => {
  test('pick an assistant, start from a starter, the model gets its instructions, the conversation keeps it', async () => {
    const { context, page } = await world.signedIn();
    // Made through the API, as a client would (the editor page has its own test below).
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

    // Shared with Bob, who may not use Ann's own assistant: the page says so, and Parley answers him.
    await world.createUser('bob@example.org', 'Bob');
    const conversationId = new URL(page.url()).pathname.split('/').at(-1)!;
    await page.evaluate(async (id) => {
      await fetch('/api/chat/shareConversation', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ conversationId: id, email: 'bob@example.org' }) });
    }, conversationId);
    const bob = await world.signedIn(undefined, undefined, 'bob@example.org');
    await bob.page.getByRole('button', { name: 'Accept' }).click();
    await bob.page.goto(`${world.url}/c/${conversationId}`);
    await waitOrExplain(bob.page, bob.page.getByText("Answering: Parley (this conversation's assistant is not available to you)"));
    await bob.page.getByRole('textbox', { name: 'Message' }).fill('Coffee instead?');
    await bob.page.getByRole('button', { name: 'Send' }).click();
    await waitOrExplain(bob.page, bob.page.locator('.message.assistant').last().getByText('Assam, strong.'));
    const his = world.ai.requests.filter((r) => r.body?.stream).at(-1)!.body;
    expect(his.messages.at(-1).content).toBe('Coffee instead?');
    expect(his.messages[0].content).not.toContain('Always recommend a tea.');
    await bob.context.close();
    await context.close();
  });

  test('the editor: made from the picker, edited, shared by an admin with a tier, deleted', async () => {
    await world.cli(['user', 'create', '--email', 'root@example.org', '--name', 'Root', '--admin']);
    const { context, page } = await world.signedIn(undefined, undefined, 'root@example.org');
    await waitOrExplain(page, page.getByRole('link', { name: 'Make an assistant' }).or(page.getByRole('link', { name: 'Manage assistants' })));
    await page.getByRole('link', { name: /(Make an|Manage) assistants?/ }).click();
    await page.waitForURL(/\/assistants$/);
    await page.getByRole('button', { name: 'New assistant' }).click();
    const form = page.getByRole('form', { name: 'New assistant' });
    await form.getByLabel('Name').fill('Gardener');
    await form.getByLabel('Description').fill('Plants and soil.');
    await form.getByLabel('Instructions').fill('Answer as a gardener.');
    await form.getByLabel('Every tool the server allows').uncheck();
    await form.getByLabel('Past conversations').check();
    await form.getByLabel('Starter 1').fill('When to sow tomatoes?');
    await expectAccessible(page, 'the assistant editor');
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('status').getByText('Gardener was created.').waitFor();
    const list = page.getByRole('list', { name: 'Your assistants' });
    await list.getByText('Gardener').waitFor();

    // Its fields came back as saved; a change is kept.
    await page.getByRole('button', { name: 'Edit Gardener' }).click();
    const edit = page.getByRole('form', { name: 'Edit Gardener' });
    await expect(edit.getByLabel('Instructions').inputValue()).resolves.toBe('Answer as a gardener.');
    await expect(edit.getByLabel('Past conversations').isChecked()).resolves.toBe(true);
    await edit.getByLabel('Description').fill('Plants, soil and compost.');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Gardener was saved.').waitFor();
    await list.getByText('Plants, soil and compost.').waitFor();
    const saved = await page.evaluate(async () => (await (await fetch('/api/assistants/list', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()).assistants);
    const gardener = saved.find((a: { name: string }) => a.name === 'Gardener');
    expect(gardener).toMatchObject({ tools: ['history'], starters: ['When to sow tomatoes?'], shared: false, visibility: 'private' });

    // An admin shares one with a tier; Ann (another tier) does not see it.
    await page.getByRole('button', { name: 'New assistant' }).click();
    const shared = page.getByRole('form', { name: 'New assistant' });
    await shared.getByLabel('Name').fill('Pro helper');
    await shared.getByLabel('Shared with other users').check();
    await shared.getByLabel('Who may use it').selectOption('tiers');
    await shared.getByRole('textbox', { name: 'Tiers' }).fill('PRO');
    await shared.getByRole('button', { name: 'Create' }).click();
    await list.getByText('Shared with PRO').waitFor();
    const ann = await world.signedIn();
    const annSees = await ann.page.evaluate(async () => (await (await fetch('/api/assistants/list', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()).assistants.map((a: { name: string }) => a.name));
    expect(annSees).not.toContain('Pro helper');
    await ann.context.close();

    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete Gardener' }).click();
    await page.getByRole('status').getByText('Gardener was deleted.').waitFor();
    await expect(list.getByText('Gardener').count()).resolves.toBe(0);
    await context.close();
  });

  test("an avatar and parameters from the editor; the assistant's model answers unless the user picks one", async () => {
    const { context, page } = await world.signedIn();
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'Look up.' }] } : { deltas: [{ content: 'Title' }] });
    await page.goto(`${world.url}/assistants`);
    await page.getByRole('button', { name: 'New assistant' }).click();
    const form = page.getByRole('form', { name: 'New assistant' });
    await form.getByLabel('Name').fill('Astronomer');
    await form.getByLabel('Model').selectOption('env-ai/large');
    const px = new Uint8Array(300 * 200 * 4).map((_, i) => (i % 4 === 3 ? 255 : i % 4 === 2 ? 200 : 40));
    await form.getByLabel('An image').setInputFiles({ name: 'star.png', mimeType: 'image/png', buffer: Buffer.from(await Transformer.fromRgbaPixels(px, 300, 200).png()) });
    await form.getByRole('img', { name: 'The new avatar' }).waitFor();
    await form.getByLabel('Temperature').fill('0.4');
    await form.getByLabel('Longest answer').fill('200');
    await expectAccessible(page, 'the assistant editor with an avatar');
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('status').getByText('Astronomer was created.').waitFor();
    const listed = page.getByRole('list', { name: 'Your assistants' }).locator('li', { hasText: 'Astronomer' }).locator('img.assistant-avatar');
    await listed.waitFor();
    await expect(listed.evaluate((img: any) => img.complete && img.naturalWidth)).resolves.toBe(128);

    // On the chat: chosen, its avatar beside the picker and the model picker showing its model.
    await page.goto(world.url);
    const picker = page.getByRole('combobox', { name: 'Assistant' });
    await waitOrExplain(page, picker);
    await picker.selectOption({ label: 'Astronomer' });
    await page.locator('.assistant-picker img.assistant-avatar').waitFor();
    await expect(page.getByRole('combobox', { name: 'Model' }).inputValue()).resolves.toBe('env-ai/large');
    await page.getByRole('textbox', { name: 'Message' }).fill('What is that star?');
    await page.getByRole('button', { name: 'Send' }).click();
    await waitOrExplain(page, page.locator('.message.assistant').last().getByText('Look up.'));
    await page.getByRole('button', { name: 'Send' }).waitFor();
    // No model was named: the assistant's answered, with its parameters.
    const first = streamedRequests().at(-1)!;
    expect({ model: first.model, temperature: first.temperature, max: first.max_tokens ?? first.max_completion_tokens }).toEqual({ model: 'large', temperature: 0.4, max: 200 });
    const heading = page.locator('.message.assistant').last().locator('h3.answer-by');
    await expect(heading.innerText()).resolves.toBe('Astronomer');
    await expect(heading.locator('img').evaluate((img: any) => img.complete && img.naturalWidth)).resolves.toBe(128);

    // Picked explicitly in this conversation: that model answers.
    await page.getByRole('combobox', { name: 'Model' }).selectOption({ label: 'small' });
    await page.getByRole('textbox', { name: 'Message' }).fill('And that one?');
    await page.getByRole('button', { name: 'Send' }).click();
    await waitOrExplain(page, page.locator('.message.assistant').nth(1).getByText('Look up.'));
    expect(streamedRequests().at(-1)!.model).toBe('small');
    await context.close();
  });
  test("knowledge and MCP servers from the editor: a document ticked, no servers; saved as the API takes them", async () => {
    const { context, page } = await world.signedIn();
    // A document of the user's, uploaded as the Files page does.
    const uploaded = await page.evaluate(async () => {
      const form = new FormData();
      form.append('file', new File(['Compost wants green and brown layers.'], 'compost.txt', { type: 'text/plain' }));
      return (await (await fetch('/api/files/upload', { method: 'POST', body: form })).json()) as { id: string };
    });
    await page.goto(`${world.url}/assistants`);
    await page.getByRole('button', { name: 'New assistant' }).click();
    const form = page.getByRole('form', { name: 'New assistant' });
    await form.getByLabel('Name').fill('Composter');
    await form.getByLabel('compost.txt').check();
    await form.getByLabel('Servers whose tools it gets').selectOption('none');
    await expectAccessible(page, 'the assistant editor with knowledge and MCP servers');
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('status').getByText('Composter was created.').waitFor();
    const saved = await page.evaluate(async () => (await (await fetch('/api/assistants/list', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()).assistants);
    expect(saved.find((a: { name: string }) => a.name === 'Composter')).toMatchObject({ knowledgeFileIds: [uploaded.id], mcpServerIds: [] });

    // Opened again, the choice is shown as saved.
    await page.getByRole('button', { name: 'Edit Composter' }).click();
    const edit = page.getByRole('form', { name: 'Edit Composter' });
    await expect(edit.getByLabel('compost.txt').isChecked()).resolves.toBe(true);
    await expect(edit.getByLabel('Servers whose tools it gets').inputValue()).resolves.toBe('none');
    await context.close();
  });
});
