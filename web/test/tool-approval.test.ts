import { describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { EMAIL, expectAccessible, lastAnswer, sendMessage, toolThenAnswer, waitOrExplain, worldForFile } from './harness';

/**
 * "Ask first" in the web app (docs/chat.md, "Tool approval"): the admin marks a tool on the Admin
 * page; the user's answer then shows the waiting call with its arguments and Allow/Deny, once or
 * always for the conversation; the prompt survives a reload; a standing denial answers later
 * calls without a prompt, until the user forgets it from the conversation's header.
 */
const world = worldForFile({ env: { PARLEY_AI_TOOLS: 'on' } }, (w) => w.cli(['user', 'set', '--email', EMAIL, '--admin']).then(() => undefined));

const prompt = (page: Page) => page.getByRole('group', { name: /Use History search\?/ });

describe('tool approval in the web app', () => {
  test('the admin marks a tool "ask first"; the answer waits with Allow/Deny, across a reload; always-deny stops later prompts', async () => {
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/admin`);
    const asks = page.getByRole('checkbox', { name: /Ask before History search/ });
    await waitOrExplain(page, asks);
    expect(await asks.isChecked()).toBe(false);
    await asks.check();
    await page.getByText('History search asks first now.').waitFor();
    await expectAccessible(page, 'admin page: tools');
    await page.reload();
    await page.getByRole('checkbox', { name: /Ask before History search/ }).waitFor();
    expect(await page.getByRole('checkbox', { name: /Ask before History search/ }).isChecked()).toBe(true);

    await page.goto(`${world.url}/`);
    toolThenAnswer(world.ai, 'search_history', { query: 'green tea' }, 'You like green tea.');
    await sendMessage(page, 'What tea do I like?');
    await waitOrExplain(page, prompt(page));
    await prompt(page).getByText('What it would send').click();
    await prompt(page).getByText('"query": "green tea"').waitFor();
    await expectAccessible(page, 'an answer waiting for approval');
    // The model was asked once and waits: the tool's round is not answered.
    expect(world.ai.requests.filter((r) => r.body?.stream).length).toBe(1);

    // A reload: the answer is followed again, and the prompt with it.
    await page.reload();
    await waitOrExplain(page, prompt(page));
    await prompt(page).getByRole('button', { name: 'Allow once' }).click();
    await waitOrExplain(page, lastAnswer(page).getByText('You like green tea.'));
    await lastAnswer(page).getByText('You allowed History search').waitFor();
    await expect(prompt(page).count()).resolves.toBe(0);

    // Always deny here: this call is denied, and the next one in the conversation asks nobody.
    toolThenAnswer(world.ai, 'search_history', { query: 'coffee' }, 'I could not look.');
    await sendMessage(page, 'And coffee?');
    await waitOrExplain(page, prompt(page));
    await prompt(page).getByRole('button', { name: 'Always deny here' }).click();
    await waitOrExplain(page, lastAnswer(page).getByText('I could not look.'));
    await lastAnswer(page).getByText('You did not allow History search').waitFor();
    const denied = world.ai.requests.at(-1)!.body.messages.find((m: any) => m.role === 'tool')?.content;
    expect(denied).toContain('denied');

    toolThenAnswer(world.ai, 'search_history', { query: 'juice' }, 'Still not looking.');
    await sendMessage(page, 'And juice?');
    await waitOrExplain(page, lastAnswer(page).getByText('Still not looking.'));
    await expect(prompt(page).count()).resolves.toBe(0);
    expect(world.ai.requests.at(-1)!.body.messages.find((m: any) => m.role === 'tool')?.content).toContain('does not allow search_history in this conversation');

    // The standing answer is in the conversation's header, and Ask again forgets it: the next call asks.
    await page.getByText('Standing tool answers (1)').click();
    const rules = page.getByRole('list', { name: 'Standing tool answers' });
    await expect(rules.getByRole('listitem').textContent()).resolves.toContain('Always denied: search_history');
    await expectAccessible(page, "a conversation's standing tool answers");
    await rules.getByRole('button', { name: 'Ask again before search_history' }).click();
    await page.getByText(/Standing tool answers/).waitFor({ state: 'detached' });
    toolThenAnswer(world.ai, 'search_history', { query: 'milk' }, 'Milk it is.');
    await sendMessage(page, 'And milk?');
    await waitOrExplain(page, prompt(page));
    await prompt(page).getByRole('button', { name: 'Allow once' }).click();
    await waitOrExplain(page, lastAnswer(page).getByText('Milk it is.'));
    await context.close();
  });
});
