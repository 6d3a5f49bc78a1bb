import { afterAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { expectAccessible, toolThenAnswer, waitOrExplain, worldForFile } from './harness';
import { startFakeImages } from '../../test/fakes/openai-images';

/**
 * An answer's tools and looks: code highlighted and math typeset from chunks loaded only then,
 * copy (the answer, a code block), the reasoning folded, regenerate (a branch), thumbs down with
 * reasons and a comment that `parley feedback export` shows, a canvas opened beside the chat and
 * edited; an image the assistant made shown from its file; the microphone and "Read aloud" absent
 * on a server without speech.
 */
const lastAnswer = (page: Page) => page.locator('.message.assistant').last();
/** The scripts the page has fetched so far (dynamic imports are not fetch calls, so the resource timings tell). */
const scriptsLoaded = (page: Page) => page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.js')));

async function ask(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('button', { name: 'Send' }).waitFor();
  await waitOrExplain(page, lastAnswer(page).getByRole('button', { name: 'Copy', exact: true }));
}

const CODE_AND_MATH = [
  'Here is the function:\n\n```python\ndef double(x):\n    return x * 2  # twice\n```\n\n',
  'Energy is $E = mc^2$, and the area is\n\n$$\\int_0^1 x\\,dx = \\frac{1}{2}$$\n\nA price of $5 and $6 stays text.',
];

// An images server too: the assistant can make pictures (generate_image), shown from their files.
const images = startFakeImages();
const world = worldForFile({ env: { PARLEY_AI_TOOLS: 'on', PARLEY_IMAGES_BASE_URL: images.url } });
afterAll(() => images.stop());

describe('answers in the web app', () => {
  test('a code block is highlighted and formulas are typeset, each from a chunk fetched only then, under the page policy; copy the answer and the code', async () => {
    const { context, page } = await world.signedIn({ permissions: ['clipboard-read', 'clipboard-write'] });
    const violations: string[] = [];
    page.on('console', (m) => /Content Security Policy/i.test(m.text()) && violations.push(m.text()));
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'A plain answer.' }] } : { deltas: [{ content: 'Title' }] });
    await ask(page, 'Say something plain');
    // No speech server here: neither the microphone nor "Read aloud" is offered.
    await expect(page.getByRole('button', { name: 'Record' }).count()).resolves.toBe(0);
    await expect(lastAnswer(page).getByRole('button', { name: 'Read aloud' }).count()).resolves.toBe(0);
    expect((await scriptsLoaded(page)).filter((n) => /markdown-(highlight|math)/.test(n))).toEqual([]);

    world.ai.chatScript = (body) => (body.stream ? { deltas: CODE_AND_MATH.map((content) => ({ content })) } : { deltas: [{ content: 'Title' }] });
    await ask(page, 'Show me code and math');
    const answer = lastAnswer(page);
    await waitOrExplain(page, answer.locator('pre code.hljs .hljs-keyword').first());
    await expect(answer.locator('pre code .hljs-keyword').allInnerTexts()).resolves.toEqual(expect.arrayContaining(['def', 'return']));
    await expect(answer.locator('.hljs-comment').innerText()).resolves.toBe('# twice');
    await waitOrExplain(page, answer.locator('.math.display .katex-display'));
    await expect(answer.locator('.math:not(.display) .katex').count()).resolves.toBe(1);
    // The typeset formula is laid out (KaTeX's stylesheet and fonts arrived), and "$5 and $6" is money.
    await expect(answer.locator('.katex-html').first().evaluate((el) => getComputedStyle(el).display)).resolves.not.toBe('none');
    await expect(answer.getByText('A price of $5 and $6 stays text.').count()).resolves.toBe(1);
    const loaded = await scriptsLoaded(page);
    expect(loaded.some((n) => n.includes('markdown-highlight'))).toBe(true);
    expect(loaded.some((n) => n.includes('markdown-math'))).toBe(true);
    expect(violations).toEqual([]);
    await expectAccessible(page, 'an answer with highlighted code and typeset math');

    await answer.getByRole('button', { name: 'Copy code' }).click();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe('def double(x):\n    return x * 2  # twice\n');
    await answer.getByRole('button', { name: 'Copy', exact: true }).click();
    await answer.getByText('Copied the answer.').waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(CODE_AND_MATH.join(''));
    await context.close();
  });

  test('the reasoning is folded away; regenerate makes a new answer in a branch and the first stays in its conversation', async () => {
    const { context, page } = await world.signedIn();
    let n = 0;
    world.ai.chatScript = (body) =>
      body.stream ? { deltas: [{ reasoning_content: 'Weighing the options.' }, { content: `Answer number ${++n}.` }] } : { deltas: [{ content: 'Title' }] };
    await ask(page, 'Pick a colour');
    const first = page.url();
    const reasoning = lastAnswer(page).locator('details.reasoning');
    await expect(reasoning.getAttribute('open')).resolves.toBeNull();
    await reasoning.getByText('Reasoning').click();
    await reasoning.getByText('Weighing the options.').waitFor();
    await lastAnswer(page).getByText('Answer number 1.').waitFor();

    await lastAnswer(page).getByRole('button', { name: 'Regenerate' }).click();
    await page.waitForURL((u) => /\/c\/[^/]+$/.test(u.pathname) && u.href !== first);
    await waitOrExplain(page, lastAnswer(page).getByText('Answer number 2.'));
    await page.locator('.branched-from').getByRole('link').waitFor();
    // The branch holds the question once and the new answer; the first conversation keeps its answer.
    await expect(page.locator('.message.user').allInnerTexts()).resolves.toEqual([expect.stringContaining('Pick a colour')]);
    await expect(page.locator('.message.assistant .markdown').allInnerTexts()).resolves.toEqual(['Answer number 2.']);
    await page.goto(first);
    await lastAnswer(page).getByText('Answer number 1.').waitFor();
    await expect(page.locator('.message.assistant').count()).resolves.toBe(1);
    await context.close();
  });

  test('thumbs down with reasons and a comment, kept after a reload, and `parley feedback export` has it', async () => {
    const { context, page } = await world.signedIn();
    world.ai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'The moon is made of cheese.' }] } : { deltas: [{ content: 'Title' }] });
    await ask(page, 'What is the moon made of?');
    // The thumbs are drawn (an inline icon), not emoji a system without an emoji font shows as empty boxes; their names say what they do.
    for (const name of ['Good answer', 'Bad answer']) {
      const thumb = lastAnswer(page).getByRole('button', { name, exact: true });
      await expect(thumb.evaluate((b) => ({ text: (b as unknown as { textContent: string }).textContent.trim(), icons: (b as unknown as { querySelectorAll(s: string): { length: number } }).querySelectorAll('svg[aria-hidden="true"]').length }))).resolves.toEqual({ text: '', icons: 1 });
    }
    await lastAnswer(page).getByRole('button', { name: 'Bad answer' }).click();
    const form = page.locator('.feedback-form');
    await form.getByRole('checkbox', { name: 'Inaccurate' }).check();
    await form.getByRole('checkbox', { name: 'Harmful' }).check();
    await form.getByRole('textbox', { name: 'Comment (optional)' }).fill('It is rock.');
    await expectAccessible(page, 'the feedback form');
    await form.getByRole('button', { name: 'Send feedback' }).click();
    await lastAnswer(page).getByText('You rated this answer bad.').waitFor();
    await page.reload();
    await waitOrExplain(page, lastAnswer(page).locator('button[aria-label="Bad answer"][aria-pressed="true"]'));
    const exported = (await world.cli(['feedback', 'export', '--format', 'jsonl'])).split('\n').map((l) => JSON.parse(l));
    expect(exported).toContainEqual(expect.objectContaining({ rating: 'down', reasons: ['inaccurate', 'harmful'], comment: 'It is rock.' }));
    // Thumbs up replaces it; pressing it again withdraws it.
    await lastAnswer(page).getByRole('button', { name: 'Good answer' }).click();
    await lastAnswer(page).getByText('You rated this answer good.').waitFor();
    await lastAnswer(page).getByRole('button', { name: 'Good answer' }).click();
    await waitOrExplain(page, lastAnswer(page).locator('button[aria-label="Good answer"][aria-pressed="false"]'));
    await context.close();
  });

  test('a canvas the assistant wrote opens beside the chat, is edited and saved, and opens edited after a reload', async () => {
    const { context, page } = await world.signedIn();
    toolThenAnswer(world.ai, 'generate_canvas', { topic: 'Garden plan', content: '# Garden plan\n\n- Plant quince' }, 'I wrote a plan in a canvas.');
    await ask(page, 'Plan my garden');
    await lastAnswer(page).getByText('Wrote a canvas: Garden plan').waitFor();
    await lastAnswer(page).getByRole('button', { name: 'Open canvas: Garden plan' }).click();
    const panel = page.getByRole('complementary', { name: 'Garden plan' });
    await panel.getByText('Plant quince').waitFor();
    await panel.getByRole('button', { name: 'Edit' }).click();
    await panel.getByRole('textbox', { name: 'Canvas text (Markdown)' }).fill('# Garden plan\n\n- Plant quince\n- Prune in February');
    await expectAccessible(page, 'a canvas being edited beside the chat');
    await panel.getByRole('button', { name: 'Save canvas' }).click();
    await panel.getByText('Prune in February').waitFor();
    await page.reload();
    await lastAnswer(page).getByRole('button', { name: 'Open canvas: Garden plan' }).click();
    const again = page.getByRole('complementary', { name: 'Garden plan' });
    await again.getByText('Prune in February').waitFor();

    // A second version; the versions list both, newest first; the first one opens into the editor and is saved as the newest.
    await again.getByRole('button', { name: 'Edit' }).click();
    await again.getByRole('textbox', { name: 'Canvas text (Markdown)' }).fill('# Garden plan\n\n- Plant medlar');
    await again.getByRole('button', { name: 'Save canvas' }).click();
    await again.getByText('Plant medlar').waitFor();
    await again.getByText('Your versions', { exact: true }).click();
    const versions = again.getByRole('list', { name: 'Your versions, newest first' });
    await versions.getByRole('listitem').nth(1).waitFor();
    await expect(versions.getByRole('listitem').count()).resolves.toBe(2);
    await expectAccessible(page, "a canvas's versions");
    await versions.getByRole('button', { name: /^Open the version of / }).last().click();
    await expect(again.getByRole('textbox', { name: 'Canvas text (Markdown)' }).inputValue()).resolves.toContain('Prune in February');
    await again.getByRole('button', { name: 'Save canvas' }).click();
    await again.getByText('Prune in February').waitFor();

    // Back to the assistant's version (the versions archived), then a version deleted for good.
    await again.getByText('Your versions', { exact: true }).click();
    page.once('dialog', (d) => void d.accept());
    await again.getByRole('button', { name: "Back to the assistant's version" }).click();
    await again.getByText("Back to the assistant's version.").waitFor();
    await expect(again.getByText('Prune in February').count()).resolves.toBe(0);
    await again.getByText('Plant quince').waitFor();
    await again.getByRole('button', { name: 'Edit' }).click();
    await again.getByRole('textbox', { name: 'Canvas text (Markdown)' }).fill('# Garden plan\n\n- Plant figs');
    await again.getByRole('button', { name: 'Save canvas' }).click();
    await again.getByText('Plant figs').waitFor();
    await again.getByText('Your versions', { exact: true }).click();
    page.once('dialog', (d) => void d.accept());
    await again.getByRole('button', { name: 'Delete your versions' }).click();
    await again.getByText('Your versions were deleted.').waitFor();
    await again.getByText('Plant quince').waitFor();
    await context.close();
  });
  test('an image the assistant made is shown from its file, also after a reload', async () => {
    const { context, page } = await world.signedIn();
    toolThenAnswer(world.ai, 'generate_image', { prompt: 'A ripe quince on a table' }, 'Here is your quince.');
    await ask(page, 'Draw me a quince');
    const picture = lastAnswer(page).getByRole('img', { name: 'Image 1 the assistant made' });
    await waitOrExplain(page, picture);
    await lastAnswer(page).getByText('Made an image').waitFor();
    await expect(picture.getAttribute('src')).resolves.toMatch(/^\/api\/files\/[^/]+\/content$/);
    await page.waitForFunction(() => (document.querySelector('.made-images img') as HTMLImageElement | null)?.naturalWidth! > 0);
    expect(images.requests.at(-1)?.prompt).toBe('A ripe quince on a table');
    await expectAccessible(page, 'an answer with an image the assistant made');
    await page.reload();
    await page.waitForFunction(() => (document.querySelector('.made-images img') as HTMLImageElement | null)?.naturalWidth! > 0);
    await context.close();
  });
});
