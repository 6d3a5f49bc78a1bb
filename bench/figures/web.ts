/**
 * Figure 8, the web app on a slow browser: the JavaScript its first load sends (compressed, as the
 * browser received it) against its budget, and the time until a signed-in user can type a
 * message (the composer is on the page, the session and the conversation list answered) in
 * Debian's Chromium with the CPU throttled 4× (DevTools' CPU throttling: a Raspberry Pi's browser
 * is about that much slower than a laptop's). The floor is the same browser, throttled the same,
 * loading a page from a raw Bun server whose one module script puts a textarea on the page:
 * what any page costs before its own code runs. Every load is cold (a new browser context, so no
 * cache), and the median of the rounds counts.
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { fmtMs, type BenchContext, type Figure } from '../lib/context';
import { startParley } from '../lib/parley';
import { freePort } from '../lib/proc';
import type { Row } from '../lib/report';
import { median, round } from '../lib/stats';

const CHROMIUM = process.env.PARLEY_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];
const THROTTLE = 4;
const TARGETS = { ttiMs: 1500, budgetKB: 150 };

/** The floor: a page and one module script that adds a textarea, served by plain Bun. */
function startFloor(port: number) {
  const html = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>floor</title></head><body><div id="app"></div><script type="module" src="/app.js"></script></body></html>';
  const js = "document.getElementById('app').append(document.createElement('textarea'));";
  return Bun.serve({
    hostname: '127.0.0.1',
    port,
    fetch: (req) =>
      new URL(req.url).pathname === '/app.js'
        ? new Response(js, { headers: { 'content-type': 'text/javascript' } })
        : new Response(html, { headers: { 'content-type': 'text/html' } }),
  });
}

interface Load {
  /** Milliseconds from navigation start until the composer could take input. */
  ttiMs: number;
  /** Compressed bytes of the scripts the page loaded (the resource timing's encodedBodySize). */
  scriptBytes: number;
}

/** One cold, throttled load of `url` in a fresh context; `cookie` signs it in. */
async function timeLoad(browser: Browser, url: string, cookie?: { name: string; value: string }): Promise<Load> {
  const context = await browser.newContext();
  try {
    if (cookie) await context.addCookies([{ ...cookie, url }]);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: THROTTLE });
    await page.goto(url, { waitUntil: 'commit' });
    // Checked on every animation frame: the answer is the first frame with a usable composer.
    const ttiMs = (await (
      await page.waitForFunction(
        () => {
          // In the page (globalThis: the bench's type check has no DOM types).
          const box = (globalThis as any).document.querySelector('textarea');
          return box && !box.disabled ? performance.now() : false;
        },
        undefined,
        { polling: 'raf', timeout: 60_000 },
      )
    ).jsonValue()) as number;
    const scriptBytes = await page.evaluate(() =>
      (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
        .filter((r) => r.initiatorType === 'script' || r.name.endsWith('.js'))
        .reduce((sum, r) => sum + r.encodedBodySize, 0),
    );
    return { ttiMs, scriptBytes };
  } finally {
    await context.close();
  }
}

/**
 * The chunks the page fetches only when used (a page most visits never open, the highlighter,
 * KaTeX), gzip-compressed as the server sends them: the service worker's shell lists every script,
 * and those the page does not name are the lazy ones.
 */
async function lazyChunks(base: string): Promise<{ name: string; bytes: number }[]> {
  const html = await (await fetch(`${base}/`)).text();
  const sw = await (await fetch(`${base}/sw.js`)).text();
  const shell = JSON.parse(/const SHELL = (\[.*?\]);/.exec(sw)?.[1] ?? '[]') as string[];
  const chunks = shell.filter((p) => p.endsWith('.js') && !html.includes(p));
  const sized = await Promise.all(
    chunks.map(async (p) => ({ name: p.replace(/^\/assets\/(.*)-[a-z0-9]+\.js$/, '$1'), bytes: Bun.gzipSync(new Uint8Array(await (await fetch(`${base}${p}`)).arrayBuffer()), { level: 9 }).length })),
  );
  return sized.sort((a, b) => b.bytes - a.bytes);
}

export const webFigure: Figure = {
  id: 'web',
  title: '8 web app',
  async run(ctx: BenchContext): Promise<Row[]> {
    const figure = '8 web app';
    if (!existsSync(CHROMIUM)) return [{ figure, measure: 'first load', skipped: `no browser at ${CHROMIUM} (apt-get install chromium)` }];
    const { chromium } = await import('playwright-core');
    const parley = await startParley(ctx.bin);
    const floor = startFloor(await freePort());
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    try {
      const session = Bun.spawnSync([ctx.bin, 'session', 'create', '--email', parley.email, '--json'], {
        env: { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: parley.dataDir },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      if (session.exitCode !== 0) throw new Error(`parley session create failed: ${session.stderr.toString()}`);
      const cookie = { name: 'parley_session', value: JSON.parse(session.stdout.toString()).token as string };
      const rounds = ctx.quick ? 3 : 7;
      const parleyLoads: Load[] = [];
      const floorLoads: Load[] = [];
      // Alternating, so a busy moment of the shared machine hits both alike.
      for (let i = 0; i < rounds; i++) {
        parleyLoads.push(await timeLoad(browser, `${parley.url}/`, cookie));
        floorLoads.push(await timeLoad(browser, `http://127.0.0.1:${floor.port}/`));
      }
      const lazy = await lazyChunks(parley.url);
      const tti = median(parleyLoads.map((l) => l.ttiMs));
      const floorTti = median(floorLoads.map((l) => l.ttiMs));
      const kb = parleyLoads[0]!.scriptBytes / 1024;
      ctx.raw.web = { throttle: THROTTLE, parleyTtiMs: parleyLoads.map((l) => round(l.ttiMs)), floorTtiMs: floorLoads.map((l) => round(l.ttiMs)), scriptBytes: parleyLoads[0]!.scriptBytes };
      return [
        {
          figure,
          measure: 'first-load JavaScript, compressed as sent',
          parley: `${kb.toFixed(1)} KB`,
          ratio: round(kb / TARGETS.budgetKB) ?? undefined,
          target: `≤ ${TARGETS.budgetKB} KB`,
          met: kb <= TARGETS.budgetKB,
          detail: 'the budget the build enforces (docs/web.md)',
        },
        {
          figure,
          measure: `signed in, cold load to a usable composer, CPU ${THROTTLE}× slower`,
          parley: fmtMs(tti),
          baseline: fmtMs(floorTti),
          ratio: round(floorTti / tti) ?? undefined,
          target: `≤ ${TARGETS.ttiMs} ms`,
          met: tti <= TARGETS.ttiMs,
          detail: `median of ${rounds} cold loads each; baseline: a one-script page from raw Bun in the same browser`,
        },
        {
          figure,
          measure: 'chunks loaded on use, compressed',
          parley: `${(lazy.reduce((n, c) => n + c.bytes, 0) / 1024).toFixed(1)} KB in ${lazy.length}`,
          detail: lazy.map((c) => `${c.name} ${(c.bytes / 1024).toFixed(1)} KB`).join(', '),
        },
      ];
    } finally {
      await browser.close().catch(() => undefined);
      floor.stop(true);
      await parley.stop();
    }
  },
};
