import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { EMAIL, expectAccessible, startWorld, type World } from './harness';

// Settings → Usage and Admin → Usage in Chromium, through the compiled binary: turns made with an
// API key against the fake provider (which reports usage), then read back in both pages.

let world: World;
let key: string;
beforeAll(async () => {
  world = await startWorld();
  await world.cli(['user', 'set', '--email', EMAIL, '--admin']);
  await world.createUser('pat@example.org', 'Pat');
  key = await world.cli(['apikey', 'create', '--email', EMAIL, '--name', 'laptop']);
  const patKey = await world.cli(['apikey', 'create', '--email', 'pat@example.org']);
  world.ai.chatScript = () => ({ deltas: [{ content: 'Fine.' }], usage: { prompt_tokens: 1200, completion_tokens: 34, total_tokens: 1234 } });
  for (const k of [key, key, patKey]) {
    const res = await fetch(`${world.url}/api/chat/stream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': k }, body: JSON.stringify({ message: 'Hi' }) });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"done"');
  }
}, 240_000);
afterAll(async () => {
  await world?.stop();
});

describe('usage pages', () => {
  test('Settings → Usage: the user\'s own tokens by day and by key, a chart and a table with totals', async () => {
    const { page } = await world.signedIn();
    await page.getByRole('navigation', { name: 'Places', includeHidden: true }).getByRole('link', { name: 'Settings', includeHidden: true }).click({ force: true });
    const usage = page.getByRole('region', { name: 'Usage', exact: true });
    const today = new Date().toISOString().slice(0, 10);
    const chart = usage.getByRole('list', { name: 'Tokens by day' });
    await chart.getByText(today).waitFor();
    await chart.getByText(`${(2468).toLocaleString('en-US')} tokens`).waitFor();
    const table = usage.getByRole('table', { name: 'Usage' });
    const total = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Total' }) });
    await expect(total.getByRole('cell').allTextContents()).resolves.toEqual(['2,400', '68', '0', '0', '0', '2', '0']);
    await expectAccessible(page, 'settings: usage');
    await usage.getByRole('combobox', { name: 'Group by' }).selectOption('key');
    await usage.getByRole('list', { name: 'Tokens by api key' }).getByText(/^laptop \(pk_/).waitFor();

    // Each call, unfolded: the two turns made with the key, named, newest first.
    await usage.getByText('Each call').click();
    const calls = usage.getByRole('table', { name: 'Your model calls, newest first' });
    const rows = calls.locator('tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    for (const row of await rows.all()) {
      const cells = await row.getByRole('cell').allTextContents();
      expect(cells).toEqual(['chat', expect.stringMatching(/\/small$/), '—', 'laptop', '1,200', '34', '0', '0']);
    }
    await expectAccessible(page, 'settings: usage calls');
  });

  test('Admin → Usage: everyone\'s, by user', async () => {
    const { page } = await world.signedIn();
    await page.goto(`${world.url}/admin`);
    const usage = page.getByRole('region', { name: 'Usage', exact: true });
    const chart = usage.getByRole('list', { name: 'Tokens by user' });
    await chart.getByText('pat@example.org').waitFor();
    await chart.getByText(EMAIL).waitFor();
    const table = usage.getByRole('table', { name: 'Usage' });
    const total = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Total' }) });
    await expect(total.getByRole('cell').allTextContents()).resolves.toEqual(['3,600', '102', '0', '0', '0', '3', '0']);
    await usage.getByRole('combobox', { name: 'Group by' }).selectOption('model');
    await usage.getByRole('list', { name: 'Tokens by model' }).getByText(/\/small$/).waitFor();
    await expectAccessible(page, 'admin: usage');
  });

  test('Admin → Quotas and prices: a tier\'s allowances and a model\'s price saved, edited and removed; the server applies them', async () => {
    const { page } = await world.signedIn();
    await page.goto(`${world.url}/admin`);
    const quotas = page.getByRole('region', { name: 'Quotas and prices' });
    await quotas.getByText('No tier has allowances: nobody is limited.').waitFor();

    // FREE (Pat's tier) gets 100 tokens a day: Pat's next turn (1,234 tokens reported before) is refused before it goes upstream.
    const tierForm = quotas.getByRole('form', { name: "A tier's allowances" });
    await tierForm.getByLabel('Tier').fill('FREE');
    await tierForm.getByLabel('Tokens').fill('100');
    await tierForm.getByRole('button', { name: 'Save allowances' }).click();
    await quotas.getByText("FREE's allowances saved.").waitFor();
    const tiers = quotas.getByRole('table', { name: "Tiers' allowances" });
    await expect(tiers.getByRole('row').nth(1).getByRole('cell').allTextContents()).resolves.toEqual(['a day', '100', 'No limit', 'No limit', 'EditRemove']);
    const patKey = await world.cli(['apikey', 'create', '--email', 'pat@example.org']);
    const sent = world.ai.requests.length;
    const refused = await (await fetch(`${world.url}/api/chat/stream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': patKey }, body: JSON.stringify({ message: 'Hi again' }) })).text();
    expect(refused).toContain('Your FREE allowance of 100 tokens a day is used up');
    expect(world.ai.requests.length).toBe(sent);

    // A price for the chat model, picked from the catalogue's list; edited, then removed.
    const priceForm = quotas.getByRole('form', { name: "A model's price" });
    await priceForm.locator('datalist option').first().waitFor({ state: 'attached' });
    const offered = await priceForm.locator('datalist option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    const model = offered.find((m) => m.endsWith('/small'))!;
    expect(model).toBeDefined();
    await priceForm.getByLabel('Model').fill(model);
    await priceForm.getByLabel('Per million input tokens').fill('2.5');
    await priceForm.getByLabel('Per million output tokens').fill('10');
    await priceForm.getByRole('button', { name: 'Save price' }).click();
    // The table is drawn with the answer that says so (allTextContents does not wait).
    await quotas.getByText(`${model}'s price saved.`).waitFor();
    const prices = quotas.getByRole('table', { name: "Models' prices" });
    await expect(prices.getByRole('row').nth(1).getByRole('cell').allTextContents()).resolves.toEqual(['2.5', '10', '0', '0', 'EditRemove']);
    await prices.getByRole('button', { name: `Edit the price of ${model}` }).click();
    await expect(priceForm.getByLabel('Per million output tokens').inputValue()).resolves.toBe('10');
    await priceForm.getByLabel('Per call').fill('0.01');
    await priceForm.getByRole('button', { name: 'Save price' }).click();
    await quotas.getByText(`${model}'s price saved.`).waitFor();
    await expect(prices.getByRole('row').nth(1).getByRole('cell').allTextContents()).resolves.toEqual(['2.5', '10', '0', '0.01', 'EditRemove']);
    const saved = JSON.parse(await world.cli(['price', 'list', '--json']));
    expect(saved).toMatchObject([{ model, inputPerMillion: 2.5, outputPerMillion: 10, perUnit: 0, perRequest: 0.01 }]);
    await expectAccessible(page, 'admin: quotas and prices');

    page.once('dialog', (d) => void d.accept());
    await prices.getByRole('button', { name: `Remove the price of ${model}` }).click();
    await quotas.getByText('No model has a price: past an allowance, nothing can be paid for with credits.').waitFor();
    page.once('dialog', (d) => void d.accept());
    await tiers.getByRole('button', { name: "Remove FREE's allowances" }).click();
    await quotas.getByText('No tier has allowances: nobody is limited.').waitFor();
    // FREE limits nothing again (the server read the change at once): Pat is answered.
    const answered = await (await fetch(`${world.url}/api/chat/stream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': patKey }, body: JSON.stringify({ message: 'Hi again' }) })).text();
    expect(answered).toContain('"done"');
  });
});
