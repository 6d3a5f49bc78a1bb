import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ARGS, CHROMIUM, EMAIL, expectAccessible, toolThenAnswer, waitOrExplain, worldForFile } from './harness';
import { startFakeVideos } from '../../test/fakes/openai-videos';
import { solidPng } from '../../test/fakes/openai-images';

/**
 * Videos and code runs in an answer.
 *
 * Videos by the real path: the compiled binary, an admin adding a `video` connection in Admin →
 * Connections (the fake videos server), the fake model calling `generate_video`; the player in
 * the answer, after a reload too, and a failed job's error.
 *
 * Code runs, and the states a live turn passes through (a video pending, code running), through
 * the app's own components in a small page fed a recorded event list (fixtures/answer-extras-
 * page.tsx): the code interpreter's events are Parley's own tool's, which no fake upstream can be
 * scripted to emit, and its server side is another branch's. The events are the shapes
 * docs/code-interpreter.md gives: `code_interpreter.in_progress {itemId, language, code}`,
 * `code_interpreter.completed {itemId, language, output, error?, files}`.
 */

const videos = startFakeVideos();
const world = worldForFile({ env: { PARLEY_AI_TOOLS: 'on', PARLEY_VIDEO_POLL_MS: '50' } }, async (w) => {
  await w.cli(['user', 'set', '--email', EMAIL, '--admin']);
});
afterAll(() => videos.stop());

const lastAnswer = (page: Page) => page.locator('.message.assistant').last();

async function ask(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('button', { name: 'Send' }).waitFor();
  await waitOrExplain(page, lastAnswer(page).getByRole('button', { name: 'Copy', exact: true }));
}

describe('videos the assistant made (the binary, a video connection)', () => {
  test('an admin adds a video connection; the answer plays the video from its file, also after a reload; a failed job says why', async () => {
    const { context, page } = await world.signedIn();
    await page.goto(`${world.url}/admin`);
    const connections = page.getByRole('region', { name: 'Connections', exact: true });
    await waitOrExplain(page, connections.getByRole('button', { name: 'Add a connection' }));
    await connections.getByRole('button', { name: 'Add a connection' }).click();
    const form = connections.getByRole('form', { name: 'Add a connection' });
    await form.getByRole('combobox', { name: 'Kind' }).selectOption({ label: 'Video generation' });
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('sora');
    await form.getByRole('textbox', { name: 'Base URL' }).fill(videos.url);
    await form.getByLabel('API key or token').fill('sk-video-key');
    await form.getByRole('spinbutton', { name: 'Clip length (seconds)' }).fill('8');
    await form.getByRole('button', { name: 'Add connection' }).click();
    await waitOrExplain(page, connections.getByRole('heading', { name: /^sora / }));

    await page.goto(world.url);
    toolThenAnswer(world.ai, 'generate_video', { prompt: 'Waves at dawn', aspect_ratio: '9:16' }, 'Here is your clip.');
    await ask(page, 'Make me a clip of waves');
    const player = lastAnswer(page).getByLabel('Video 1 the assistant made');
    await waitOrExplain(page, player);
    await expect(player.getAttribute('src')).resolves.toMatch(/^\/api\/files\/[^/]+\/content$/);
    await expect(lastAnswer(page).getByRole('link', { name: 'Download the video' }).getAttribute('download')).resolves.toBe('');
    expect(videos.requests.at(-1)).toMatchObject({ prompt: 'Waves at dawn', seconds: '8', size: '720x1280', authorization: 'Bearer sk-video-key' });
    // The player's address is Parley's, with the session: the bytes come back as a video.
    const src = (await player.getAttribute('src'))!;
    await expect(page.evaluate(async (u) => (await fetch(u)).headers.get('content-type'), src)).resolves.toBe('video/mp4');
    await expectAccessible(page, 'an answer with a video the assistant made');
    await page.reload();
    await waitOrExplain(page, lastAnswer(page).getByLabel('Video 1 the assistant made'));
    // In the library too: previewed in the player.
    const chatUrl = page.url();
    await page.goto(`${world.url}/files`);
    const preview = page.getByRole('button', { name: /^Preview video-[0-9a-f]{16}\.mp4$/ });
    await waitOrExplain(page, preview);
    await preview.click();
    await waitOrExplain(page, page.locator('.file-preview video'));
    await page.goto(chatUrl);
    await waitOrExplain(page, lastAnswer(page).getByLabel('Video 1 the assistant made'));

    videos.plan = () => ({ outcome: 'failed', code: 'video_generation_failed' });
    toolThenAnswer(world.ai, 'generate_video', { prompt: 'A cat surfing' }, 'Sorry, no clip.');
    await ask(page, 'Make me a clip of a cat');
    const failure = 'The video could not be made: The video server could not make this video (the job failed).';
    await waitOrExplain(page, lastAnswer(page).getByText(failure));
    await page.reload();
    await waitOrExplain(page, lastAnswer(page).getByText(failure));
    await context.close();
  });
});

// --- the components, fed recorded events -----------------------------------------------------

const PYTHON = 'import csv\ntotal = 0\nfor row in csv.reader(open("sales.csv")):\n    total += int(row[1])\nprint(total)';
const JAVASCRIPT = 'const rows = fs.readFile("sales.csv");\nJSON.parse("{")';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60"><rect width="120" height="60" fill="#3a7"/></svg>';
const PNG = solidPng(40, 30);
const FILES = { svg: 'f-svg-0001', png: 'f-png-0002', csv: 'f-csv-0003' };

const RUNNING = [
  { type: 'code_interpreter.in_progress', itemId: 'c1', language: 'python', code: PYTHON },
  { type: 'generate_video.in_progress', itemId: 'v1', prompt: 'Waves at dawn', aspect_ratio: '16:9' },
];
const ENDED = [
  ...RUNNING,
  {
    type: 'code_interpreter.completed',
    itemId: 'c1',
    language: 'python',
    output: '1234\n',
    files: [
      { fileId: FILES.svg, filename: 'chart.svg', contentType: 'image/svg+xml', size: SVG.length },
      { fileId: FILES.png, filename: 'plot.png', contentType: 'image/png', size: PNG.length },
      { fileId: FILES.csv, filename: 'totals.csv', contentType: 'text/csv', size: 20 },
    ],
  },
  { type: 'code_interpreter.in_progress', itemId: 'c2', language: 'javascript', code: JAVASCRIPT },
  { type: 'code_interpreter.completed', itemId: 'c2', language: 'javascript', output: '', error: 'SyntaxError: JSON Parse error: Expected \'}\'', files: [] },
  { type: 'generate_video.completed', itemId: 'v1', video: { url: '/api/files/f-vid-0004/content', fileId: 'f-vid-0004', mimeType: 'video/mp4' }, model: 'sora-2' },
  // A video address not on Parley is never put in the page.
  { type: 'generate_video.in_progress', itemId: 'v2', prompt: 'Elsewhere' },
  { type: 'generate_video.completed', itemId: 'v2', video: { url: 'https://elsewhere.example/v.mp4' }, model: 'sora-2' },
];

let browser: Browser;
let server: ReturnType<typeof Bun.serve>;
const outDir = mkdtempSync(join(tmpdir(), 'parley-extras-page-'));
const fileRequests: string[] = [];

beforeAll(async () => {
  const built = await Bun.build({
    entrypoints: [join(import.meta.dir, 'fixtures', 'answer-extras-page.tsx')],
    outdir: outDir,
    splitting: true,
    publicPath: '/',
    define: { PARLEY_KATEX_CSS: JSON.stringify('/katex.css') },
    naming: { entry: '[name].[ext]', chunk: '[name]-[hash].[ext]' },
  });
  if (!built.success) throw new AggregateError(built.logs, 'the extras page did not bundle');
  const css = [await Bun.file(join(import.meta.dir, '../src/shared/style.css')).text(), await Bun.file(join(import.meta.dir, '../src/chat/chat.css')).text()].join('\n');
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path.startsWith('/api/files/')) {
        fileRequests.push(path);
        if (path === `/api/files/${FILES.svg}/content`) return new Response(SVG, { headers: { 'content-type': 'image/svg+xml' } });
        if (path === `/api/files/${FILES.png}/content`) return new Response(PNG as Uint8Array<ArrayBuffer>, { headers: { 'content-type': 'image/png' } });
        return new Response('a,b\n1,2\n', { headers: { 'content-type': 'text/csv' } });
      }
      const mode = new URL(req.url).searchParams.get('events');
      if (path === '/') {
        const events = mode === 'running' ? RUNNING : ENDED;
        const stored = mode === 'stored';
        const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Answer</title><style>${css}</style></head><body><div id="root"></div><script>window.__events=${JSON.stringify(stored ? RUNNING : events)};window.__stored=${stored}</script><script type="module" src="/answer-extras-page.js"></script></body></html>`;
        return new Response(page, { headers: { 'content-type': 'text/html' } });
      }
      const file = Bun.file(join(outDir, path));
      return (await file.exists()) ? new Response(file, { headers: { 'content-type': 'text/javascript' } }) : new Response('not found', { status: 404 });
    },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  server?.stop(true);
  rmSync(outDir, { recursive: true, force: true });
});

async function open(events: 'running' | 'ended' | 'stored') {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.port}/?events=${events}`);
  return page;
}

describe('code runs and video states in an answer (recorded events, the app\'s components)', () => {
  test('while the turn runs: the code is shown running, the video pending', async () => {
    const page = await open('running');
    await waitOrExplain(page, page.getByText('Running Python code…'));
    await page.getByRole('status').getByText('Making a video… this can take a few minutes.').waitFor();
    await expect(page.locator('video').count()).resolves.toBe(0);
    await expectAccessible(page, 'an answer running code and making a video');
    await page.close();
  });

  test('ended: code folded, highlighted when opened, its output and error; plots shown and files downloadable; the video player', async () => {
    const page = await open('ended');
    const first = page.getByRole('region', { name: 'Code run 1' });
    await waitOrExplain(page, first.getByText('Ran Python code', { exact: true }));
    // Folded: the code and output are there but not shown until opened.
    await expect(first.locator('details').getAttribute('open')).resolves.toBeNull();
    await expect(first.getByText('1234').isVisible()).resolves.toBe(false);
    await first.getByText('Ran Python code', { exact: true }).click();
    await waitOrExplain(page, first.locator('pre code.hljs .hljs-keyword').first());
    await expect(first.locator('.hljs-keyword').allInnerTexts()).resolves.toEqual(expect.arrayContaining(['import', 'for', 'in']));
    await expect(first.locator('pre code').innerText()).resolves.toBe(`${PYTHON}\n`);
    await expect(first.locator('.code-run-output').innerText()).resolves.toBe('1234\n');

    // The files the code wrote, in view without opening: the SVG and PNG as images, each a download link.
    const files = first.getByRole('list', { name: 'Files the code wrote' });
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('.code-run-files img')].every((i) => i.naturalWidth > 0));
    await expect(files.getByRole('img').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).alt))).resolves.toEqual(['chart.svg', 'plot.png']);
    await expect(files.getByRole('link', { name: 'totals.csv' }).getAttribute('href')).resolves.toBe(`/api/files/${FILES.csv}/content`);
    await expect(files.getByRole('link', { name: 'totals.csv' }).getAttribute('download')).resolves.toBe('totals.csv');
    expect(await files.getByRole('link').count()).toBe(3);

    // A run that failed says so on its fold, and shows the error inside.
    const second = page.getByRole('region', { name: 'Code run 2' });
    await second.getByText('Ran JavaScript code: it failed').click();
    // A JavaScript call: its code highlighted as JavaScript.
    await waitOrExplain(page, second.locator('pre code.hljs .hljs-keyword').first());
    await expect(second.locator('.hljs-keyword').allInnerTexts()).resolves.toEqual(['const']);
    await expect(second.locator('pre code').innerText()).resolves.toBe(`${JAVASCRIPT}\n`);
    await expect(second.locator('.code-run-error').innerText()).resolves.toBe("SyntaxError: JSON Parse error: Expected '}'");

    // The video: a player of Parley's file; the one from elsewhere is refused in words.
    await expect(page.getByLabel('Video 1 the assistant made').getAttribute('src')).resolves.toBe('/api/files/f-vid-0004/content');
    await page.getByText('The video could not be made: The video has no address on this server.').waitFor();
    await expect(page.locator('video').count()).resolves.toBe(1);
    await expectAccessible(page, 'an answer with code runs, plots and a video');
    await page.close();
  });

  test('a reloaded answer whose parts end mid-way: nothing is left running or pending', async () => {
    const page = await open('stored');
    await waitOrExplain(page, page.getByText('Ran Python code', { exact: true }));
    await page.getByText('The video could not be made: The video was not finished.').waitFor();
    await expect(page.getByRole('status').count()).resolves.toBe(0);
    await page.close();
  });
});
