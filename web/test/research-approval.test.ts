import { afterAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { EMAIL, expectAccessible, researchEnv, waitOrExplain, worldForFile } from './harness';
import { startFakeSearxng } from '../../test/fakes/searxng';

/**
 * "Ask first" on the research page (docs/chat.md, "Tool approval"; docs/web.md): a research run
 * whose report calls a tool the admin marked shows the chat page's approve/deny prompt, the
 * prompt is there again after a reload, and the run goes on once the user answers.
 */
const searx = startFakeSearxng();
afterAll(() => searx.stop());
const world = worldForFile({ env: { ...researchEnv(searx.url), PARLEY_AI_TOOLS: 'on' } }, (w) => w.cli(['user', 'set', '--email', EMAIL, '--admin']).then(() => undefined));

const prompt = (page: Page) => page.getByRole('group', { name: /Use History search\?/ });

describe('tool approval on the research page', () => {
  test('the report waits on an "ask first" tool with Allow/Deny, across a reload; allowed, the report is written', async () => {
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/research`);
    const set = await page.evaluate(async () => {
      const res = await fetch('/api/admin/setToolSettings', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tools: [{ name: 'search_history', approval: 'ask' }] }),
      });
      return res.status;
    });
    expect(set).toBe(200);

    // The planner (not streamed) gets its queries; the report's first streamed turn calls the
    // tool, the next one (after the user's answer) writes the report.
    let streamed = 0;
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = (body) => {
      if (!body.stream) return { deltas: [{ content: '["green tea"]' }] };
      return streamed++ === 0
        ? { deltas: [{ tool_calls: [{ index: 0, id: 'call_history', type: 'function', function: { name: 'search_history', arguments: '{"query":"tea"}' } }] }], finish_reason: 'tool_calls' }
        : { deltas: [{ content: 'Green tea is **good** for you.' }] };
    };

    await page.getByRole('textbox', { name: 'Research question' }).fill('Is green tea good for me?');
    await page.getByRole('button', { name: 'Start research' }).click();
    await page.waitForURL(/\/research\/[^/]+$/);
    await waitOrExplain(page, prompt(page));
    await page.getByRole('status').getByText('Waiting for your answer…').waitFor();
    await prompt(page).getByText('What it would send').click();
    await prompt(page).getByText('"query": "tea"').waitFor();
    await expectAccessible(page, 'a research run waiting for approval');

    // A reload: the run is followed again from its first event, and the prompt with it.
    await page.reload();
    await waitOrExplain(page, prompt(page));
    expect(streamed).toBe(1);
    await prompt(page).getByRole('button', { name: 'Allow once' }).click();
    const report = page.getByRole('region', { name: 'Report' }).locator('.markdown');
    await waitOrExplain(page, report.getByText('Green tea is good for you.'));
    await page.getByRole('status').getByText('Finished.').waitFor();
    await expect(prompt(page).count()).resolves.toBe(0);
    // The tool ran: its output went back to the model with the report's next turn.
    expect(world.ai.requests.at(-1)!.body.messages.some((m: any) => m.role === 'tool')).toBe(true);
    await context.close();
  }, 120_000);
});
