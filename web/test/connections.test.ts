/**
 * The Admin page's connections and models, and what they do to the chat: an admin adds two chat
 * connections (two fake OpenAI-compatible servers, one asking for a key), sees a wrong key, an
 * unreachable address and a web page in words, mends the key, renames, hides and moves models,
 * sets the default; the chat's picker then offers both servers' models, greys the one whose
 * server is down, and each answers when chosen mid-conversation. The environment's connection
 * can only be disabled; a removed connection's models leave the picker.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import type { Locator, Page } from 'playwright-core';
import { modelList, startFakeOpenAI } from '../../test/fakes/openai';
import { startLocalModelServer } from '../../test/fakes/local-model-servers';
import { EMAIL, expectAccessible, waitOrExplain, worldForFile } from './harness';

const RIGHT_KEY = 'sk-cloud-right-key-7f3a';
const WRONG_KEY = 'sk-cloud-wrong-key-19c2';

const laptop = startFakeOpenAI();
laptop.gets['/v1/models'] = modelList(['qwen-7b', 'llama-3b', 'nomic-embed-text']);
laptop.chatScript = (body) => ({ deltas: [{ content: body.stream ? 'From the laptop.' : 'Title' }] });
const cloud = startFakeOpenAI({ apiKey: RIGHT_KEY });
cloud.gets['/v1/models'] = modelList(['cloud-large', 'cloud-mini']);
cloud.chatScript = (body) => ({ deltas: [{ content: body.stream ? 'From the cloud.' : 'Title' }] });
// Something that answers HTTP but is no AI server, and a port nothing listens on.
const webPage = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<html>hello</html>', { headers: { 'content-type': 'text/html' } }) });
const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
const closedUrl = `http://127.0.0.1:${closed.port}/v1`;
closed.stop(true);

// An Ollama on this machine, for "Look for servers on this machine" (the only port looked at).
const ollama = startLocalModelServer('ollama', ['qwen2.5:0.5b']);
const ollamaPort = new URL(ollama.url).port;

const world = worldForFile({ env: { PARLEY_DISCOVER_PORTS: ollamaPort } }, async (w) => {
  await w.cli(['user', 'set', '--email', EMAIL, '--admin']);
});
afterAll(() => {
  laptop.stop();
  cloud.stop();
  ollama.stop();
  webPage.stop(true);
});

const connectionsOf = (page: Page) => page.getByRole('region', { name: 'Connections', exact: true });
const modelsOf = (page: Page) => page.getByRole('region', { name: 'Models', exact: true });
/** A connection's card, by its name (its heading is the name and then its kind). */
const card = (page: Page, name: string) =>
  connectionsOf(page)
    .getByRole('list', { name: 'Connections' })
    .getByRole('listitem')
    .filter({ has: page.getByRole('heading', { name: new RegExp(`^${name} `) }) });
const row = (page: Page, id: string) => modelsOf(page).getByRole('row').filter({ has: page.getByRole('button', { name: `Edit ${id}`, exact: true }) });
const healthOf = (item: Locator) => item.locator('dt:text-is("Health") + dd');

async function openAdmin(page: Page) {
  await page.goto(`${world.url}/admin`);
  await waitOrExplain(page, card(page, 'env-ai'));
}

async function addConnection(page: Page, fields: { name: string; baseUrl: string; key?: string; model?: string }) {
  const connections = connectionsOf(page);
  await connections.getByRole('button', { name: 'Add a connection' }).click();
  const form = connections.getByRole('form', { name: 'Add a connection' });
  await expect(form.getByRole('combobox', { name: 'Kind' }).inputValue()).resolves.toBe('chat');
  await form.getByRole('textbox', { name: 'Name', exact: true }).fill(fields.name);
  await form.getByRole('textbox', { name: 'Base URL' }).fill(fields.baseUrl);
  if (fields.key) await form.getByLabel('API key or token').fill(fields.key);
  if (fields.model) await form.getByRole('textbox', { name: 'Default model' }).fill(fields.model);
  await form.getByRole('button', { name: 'Add connection' }).click();
}

/** Send a message and wait for its answer (the next assistant message) to be `answer`, finished. */
async function say(page: Page, text: string, answer: string) {
  const answers = page.locator('.message.assistant');
  const n = await answers.count();
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await waitOrExplain(page, answers.nth(n).getByText(answer));
  await page.getByRole('button', { name: 'Send' }).waitFor();
}

const streamed = (fake: typeof laptop) => fake.requests.filter((r) => r.path === 'POST /v1/chat/completions' && r.body.stream);

describe('connections and models on the Admin page', () => {
  test('two chat connections added, a wrong key seen and mended, models renamed, hidden and moved, the default set; the chat switches between them', async () => {
    const { context, page } = await world.signedIn();
    await openAdmin(page);
    const connections = connectionsOf(page);
    await expectAccessible(page, 'admin: connections');

    // A local server without a key: added, tested at once, its models counted.
    await addConnection(page, { name: 'laptop', baseUrl: laptop.url });
    await waitOrExplain(page, connections.getByRole('status').getByText(/^Added laptop\. Reachable in \d+ ms, 3 models\.$/));
    await expect(healthOf(card(page, 'laptop')).innerText()).resolves.toMatch(/^Reachable in \d+ ms, 3 models\. \(checked at /);
    await card(page, 'laptop').getByText('Added by an admin.').waitFor();
    await card(page, 'laptop').getByText('None', { exact: true }).waitFor(); // no key

    // A hosted one with a wrong key: the test says so in words, and the key is nowhere on the page.
    await addConnection(page, { name: 'cloud', baseUrl: cloud.url, key: WRONG_KEY, model: 'cloud-large' });
    await waitOrExplain(page, connections.getByRole('status').getByText('Added cloud. Refused the credential (HTTP 401).'));
    const cloudCard = card(page, 'cloud');
    await cloudCard.getByText('Set (never shown)').waitFor();
    await cloudCard.getByRole('button', { name: 'Test cloud' }).click();
    await waitOrExplain(page, healthOf(cloudCard).getByText(/^Refused the credential \(HTTP 401\)\./));
    expect(await page.content()).not.toContain(WRONG_KEY);
    await expectAccessible(page, 'admin: a connection refusing its key');

    // Bad addresses, said in words: nothing listening, a web page, a password in the URL.
    await addConnection(page, { name: 'gone', baseUrl: closedUrl, model: 'old-model' });
    await waitOrExplain(page, connections.getByRole('status').getByText('Added gone. Could not be reached (connection refused).'));
    await addConnection(page, { name: 'page', baseUrl: `http://127.0.0.1:${webPage.port}/v1`, model: 'none' });
    await waitOrExplain(page, connections.getByRole('status').getByText('Added page. Answered, but not with a model list: is this the base URL of an AI server?'));
    await addConnection(page, { name: 'userinfo', baseUrl: 'http://me:hunter2@127.0.0.1:9/v1' });
    const form = connections.getByRole('form', { name: 'Add a connection' });
    await waitOrExplain(page, form.getByRole('alert').getByText('The base URL carries a user name or password: put the credential in its own field, where it is sealed.'));
    await form.getByRole('button', { name: 'Cancel' }).click();
    page.once('dialog', (d) => void d.accept());
    await card(page, 'page').getByRole('button', { name: 'Remove page' }).click();
    await connections.getByRole('status').getByText('Removed page.').waitFor();

    // The key mended: the edit form starts with no key shown, and an empty field would keep the stored one.
    await cloudCard.getByRole('button', { name: 'Edit cloud' }).click();
    const edit = cloudCard.getByRole('form', { name: 'Edit cloud' });
    const keyField = edit.getByLabel('New API key or token');
    await expect(keyField.inputValue()).resolves.toBe('');
    await expect(keyField.getAttribute('type')).resolves.toBe('password');
    await expect(edit.getByRole('textbox', { name: 'Default model' }).inputValue()).resolves.toBe('cloud-large');
    await edit.getByRole('checkbox', { name: 'Remove the stored key' }).waitFor();
    await expectAccessible(page, 'admin: editing a connection');
    await keyField.fill(RIGHT_KEY);
    await edit.getByRole('button', { name: 'Save connection' }).click();
    await waitOrExplain(page, connections.getByRole('status').getByText(/^Saved cloud\. Reachable in \d+ ms, 2 models\.$/));
    await cloudCard.getByRole('status').getByText('Models: cloud-large, cloud-mini').waitFor();
    expect(cloud.requests.at(-1)).toMatchObject({ path: 'GET /v1/models' });

    // The catalogue: every enabled chat connection's models, the dead one's unavailable.
    const models = modelsOf(page);
    await waitOrExplain(page, row(page, 'cloud/cloud-mini'));
    await expect(row(page, 'gone/old-model').getByRole('cell', { name: 'No: its server did not answer' }).count()).resolves.toBe(1);
    await expect(row(page, 'laptop/nomic-embed-text').count()).resolves.toBe(0); // not a chat model
    await row(page, 'laptop/qwen-7b').getByRole('button', { name: 'Edit laptop/qwen-7b' }).click();
    const modelForm = models.getByRole('form', { name: 'Model laptop/qwen-7b' });
    await modelForm.getByRole('textbox', { name: 'Display name' }).fill('Qwen on the laptop');
    await modelForm.getByRole('combobox', { name: 'Sees images' }).selectOption('no');
    await modelForm.getByRole('spinbutton', { name: 'Context window (tokens)' }).fill('32768');
    await expectAccessible(page, 'admin: a model being edited');
    await modelForm.getByRole('button', { name: 'Save model' }).click();
    await models.getByRole('status').getByText('Saved laptop/qwen-7b.').waitFor();
    const qwen = row(page, 'laptop/qwen-7b');
    await qwen.getByRole('rowheader', { name: /^Qwen on the laptop/ }).waitFor();
    await qwen.getByRole('cell', { name: 'tools · 32,768 tokens' }).waitFor();

    await row(page, 'laptop/llama-3b').getByRole('button', { name: 'Edit laptop/llama-3b' }).click();
    await models.getByRole('form', { name: 'Model laptop/llama-3b' }).getByRole('checkbox', { name: /^Hidden/ }).check();
    await models.getByRole('form', { name: 'Model laptop/llama-3b' }).getByRole('button', { name: 'Save model' }).click();
    await row(page, 'laptop/llama-3b').getByRole('cell', { name: 'Hidden' }).waitFor();

    // Moved: cloud-mini up, above cloud-large; the order is the users' order too.
    const order = () => models.locator('tbody th[scope="row"]').allInnerTexts();
    const before = await order();
    const at = before.indexOf('cloud-mini');
    expect(before[at - 1]).toBe('cloud-large');
    await models.getByRole('button', { name: 'Move cloud/cloud-mini up' }).press('Enter');
    await models.getByRole('status').getByText('Moved cloud-mini up.').waitFor();
    await waitOrExplain(page, models.locator(`tbody tr:nth-child(${at}) th`).getByText('cloud-mini', { exact: true }));
    // The keyboard stays on the moved model's arrows: at the top now, its Up is disabled, so on its Down.
    expect(at).toBe(1);
    await waitOrExplain(page, models.getByRole('button', { name: 'Move cloud/cloud-mini down' }).and(page.locator(':focus')));
    await expect(models.getByRole('button', { name: 'Move cloud/cloud-mini up' }).isDisabled()).resolves.toBe(true);

    // The default: the cloud's large model.
    const defaults = models.getByRole('form', { name: 'Defaults' });
    await defaults.getByRole('combobox', { name: 'Chat', exact: true }).selectOption('cloud/cloud-large');
    await defaults.getByRole('button', { name: 'Save defaults' }).click();
    await models.getByRole('status').getByText('Saved the default models.').waitFor();
    await expectAccessible(page, 'admin: models');

    // The chat: both connections' models, the renamed one by its name, the hidden one absent, the dead one greyed.
    await page.goto(`${world.url}/`);
    const picker = page.getByRole('combobox', { name: 'Model' });
    await waitOrExplain(page, picker);
    await expect(picker.inputValue()).resolves.toBe('cloud/cloud-large');
    const labels = await picker.locator('option').allInnerTexts();
    expect(labels).toEqual(expect.arrayContaining(['Qwen on the laptop · laptop', 'cloud-large · cloud', 'cloud-mini · cloud', 'small · env-ai', 'old-model · gone (unavailable)']));
    expect(labels.some((l) => l.startsWith('llama-3b'))).toBe(false);
    // The admin's order: cloud-mini moved above cloud-large.
    expect(labels.indexOf('cloud-mini · cloud')).toBeLessThan(labels.indexOf('cloud-large · cloud'));
    await expect(picker.locator('option[value="gone/old-model"]').isDisabled()).resolves.toBe(true);
    await expect(picker.locator('option[value="laptop/qwen-7b"]').isDisabled()).resolves.toBe(false);
    await expectAccessible(page, 'chat: the model picker with two connections');

    const cloudBefore = streamed(cloud).length;
    await say(page, 'Hello from the first question', 'From the cloud.');
    expect(streamed(cloud).length).toBe(cloudBefore + 1);
    expect(streamed(cloud).at(-1)!.body.model).toBe('cloud-large');
    await picker.selectOption('laptop/qwen-7b');
    await say(page, 'And now the laptop', 'From the laptop.');
    const sent = streamed(laptop).at(-1)!.body;
    expect(sent.model).toBe('qwen-7b');
    // Each answer names the model that wrote it as the picker does: its name and its connection.
    const answers = page.locator('.message.assistant');
    await expect(answers.nth(0).locator('.model-name').innerText()).resolves.toBe('cloud-large · cloud');
    await expect(answers.nth(1).locator('.model-name').innerText()).resolves.toBe('Qwen on the laptop · laptop');
    // The whole conversation went along, the other server's answer included.
    expect(JSON.stringify(sent.messages)).toContain('From the cloud.');
    await picker.selectOption('cloud/cloud-mini');
    await say(page, 'And back to the cloud', 'From the cloud.');
    expect(streamed(cloud).at(-1)!.body.model).toBe('cloud-mini');
    await expect(page.locator('.message.assistant').nth(2).locator('.model-name').innerText()).resolves.toBe('cloud-mini · cloud');
    await expect(page.locator('.message.assistant').count()).resolves.toBe(3);
    await context.close();
  }, 120_000);

  test("the environment's connection says so and can only be disabled; disabled, its models leave the picker", async () => {
    const { context, page } = await world.signedIn();
    await openAdmin(page);
    const env = card(page, 'env-ai');
    await env.getByText('The environment file: its settings are changed there and take effect at the next start. Here it can only be disabled or enabled.').waitFor();
    await expect(env.getByRole('button').allInnerTexts()).resolves.toEqual(['Test', 'Disable']);
    await env.getByText('Set (never shown)').waitFor(); // the world's PARLEY_AI_API_KEY
    await env.getByRole('button', { name: 'Disable env-ai' }).click();
    await connectionsOf(page).getByRole('status').getByText('Disabled env-ai: nothing uses it until it is enabled again.').waitFor();
    await env.getByText('Disabled', { exact: true }).waitFor();
    await expectAccessible(page, 'admin: a disabled connection');

    await page.goto(`${world.url}/`);
    const picker = page.getByRole('combobox', { name: 'Model' });
    await waitOrExplain(page, picker);
    await expect(picker.locator('option[value="env-ai/small"]').count()).resolves.toBe(0);

    await openAdmin(page);
    await env.getByRole('button', { name: 'Enable env-ai' }).click();
    await connectionsOf(page).getByRole('status').getByText('Enabled env-ai.').waitFor();
    await page.goto(`${world.url}/`);
    await waitOrExplain(page, page.getByRole('combobox', { name: 'Model' }));
    await page.locator('option[value="env-ai/small"]').waitFor({ state: 'attached' });
    await context.close();
  }, 90_000);

  test('look for servers on this machine: an Ollama found, added with one click, its model in the catalogue', async () => {
    const { context, page } = await world.signedIn();
    await openAdmin(page);
    const connections = connectionsOf(page);
    await connections.getByRole('button', { name: 'Look for servers on this machine' }).click();
    const found = connections.getByRole('listitem').filter({ has: page.getByRole('heading', { name: new RegExp(`^Ollama.* at 127\\.0\\.0\\.1:${ollamaPort}$`) }) });
    await waitOrExplain(page, found);
    await found.getByText('qwen2.5:0.5b', { exact: true }).waitFor();
    await expectAccessible(page, 'admin: servers found on this machine');
    const name = `ollama-${ollamaPort}`;
    await found.getByRole('button', { name: `Add ${name}` }).click();
    await found.getByRole('status').getByText(`Added as ${name}`).waitFor();
    await waitOrExplain(page, card(page, name));
    await waitOrExplain(page, row(page, `${name}/qwen2.5:0.5b`));
    await context.close();
  }, 90_000);

  test("a removed connection's models leave the picker, and a remembered choice of one falls back to the default", async () => {
    const { context, page } = await world.signedIn();
    await waitOrExplain(page, page.getByRole('combobox', { name: 'Model' }));
    await page.getByRole('combobox', { name: 'Model' }).selectOption('cloud/cloud-mini');
    await openAdmin(page);
    for (const name of ['cloud', 'gone']) {
      page.once('dialog', (d) => void d.accept());
      await card(page, name).getByRole('button', { name: `Remove ${name}` }).click();
      await connectionsOf(page).getByRole('status').getByText(`Removed ${name}.`).waitFor();
    }
    await expect(card(page, 'cloud').count()).resolves.toBe(0);
    await expect(row(page, 'cloud/cloud-large').count()).resolves.toBe(0);

    await page.goto(`${world.url}/`);
    const picker = page.getByRole('combobox', { name: 'Model' });
    await waitOrExplain(page, picker);
    const values = await picker.locator('option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    expect(values.filter((v) => v.startsWith('cloud/') || v.startsWith('gone/'))).toEqual([]);
    expect(values).toContain('laptop/qwen-7b');
    // The default was the cloud's: it gives way to the first connection's own model.
    await expect(picker.inputValue()).resolves.toBe('env-ai/small');
    world.ai.chatScript = () => ({ deltas: [{ content: 'From the environment.' }] });
    await say(page, 'Who answers now?', 'From the environment.');
    await context.close();
  }, 90_000);
});
