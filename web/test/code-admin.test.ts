import { describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { EMAIL, expectAccessible, lastAnswer, sendMessage, toolThenAnswer, waitOrExplain, worldForFile } from './harness';

/**
 * The code interpreter switched from the web app (docs/code-interpreter.md, "Turning it on"): off
 * by default, the admin turns it on in Admin → Tools; the fake model's `run_python` call then runs
 * in the compiled binary's sandbox and the answer shows it; off again, no turn is offered it. The
 * page says what the video source lacks without a video connection.
 */
const world = worldForFile({ env: { PARLEY_AI_TOOLS: 'on' } }, (w) => w.cli(['user', 'set', '--email', EMAIL, '--admin']).then(() => undefined));

const codeSwitch = (page: Page) => page.getByRole('checkbox', { name: 'Code interpreter: on' });
/** The tool names of the newest streamed request to the model. */
const offeredTools = (): string[] => (world.ai.requests.filter((r) => r.body?.stream).at(-1)!.body.tools ?? []).map((t: any) => t.function?.name);

describe('the code interpreter in the web app', () => {
  test('the admin turns it on in Admin → Tools; a chat then runs Python; off again, it is gone', async () => {
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/admin`);
    await waitOrExplain(page, codeSwitch(page));
    expect(await codeSwitch(page).isChecked()).toBe(false);
    const codeRow = page.getByRole('row', { name: /Code interpreter/ });
    await codeRow.getByText('Each running sandbox is a child process of about 170 MB; at most 2 run at once (PARLEY_CODE_MAX_SANDBOXES).').waitFor();
    // No video connection: the row says so where the switch would be.
    const videoRow = page.getByRole('row', { name: /Video/ });
    await videoRow.getByText('No video connection is enabled: add one of kind video under Connections (docs/video.md).').waitFor();
    expect(await page.getByRole('checkbox', { name: 'Video: on' }).count()).toBe(0);
    await expectAccessible(page, 'admin page: tools with notes and a missing connection');

    await codeSwitch(page).check();
    await page.getByText('Code interpreter is on.').waitFor();

    await page.goto(`${world.url}/`);
    toolThenAnswer(world.ai, 'run_python', { code: 'print(6 * 7)' }, 'It is 42.');
    await sendMessage(page, 'What is six times seven? Check it in Python.');
    await waitOrExplain(page, lastAnswer(page).getByText('It is 42.'), 60_000);
    await lastAnswer(page).getByText('Ran Python code').waitFor();
    const told = world.ai.requests.at(-1)!.body.messages.find((m: any) => m.role === 'tool')?.content;
    expect(told).toContain('42');
    expect(offeredTools()).toContain('run_python');

    await page.goto(`${world.url}/admin`);
    await waitOrExplain(page, codeSwitch(page));
    expect(await codeSwitch(page).isChecked()).toBe(true);
    await codeSwitch(page).uncheck();
    await page.getByText('Code interpreter is off.').waitFor();

    await page.goto(`${world.url}/`);
    world.ai.chatScript = (body) => ({ deltas: [{ content: body.stream ? 'No Python here.' : 'Title' }] });
    await sendMessage(page, 'And now?');
    await waitOrExplain(page, lastAnswer(page).getByText('No Python here.'));
    expect(offeredTools()).not.toContain('run_python');
    await context.close();
  });
});
