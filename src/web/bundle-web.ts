import { join } from 'node:path';
import { mathAssets } from './math-assets';
import { appShellFiles, withShellLinks } from './app-shell-files';

/**
 * The web app's files, bundled from `web/index.html` by Bun's HTML bundler: the page, its script
 * and its stylesheet, minified, assets under `/assets/` with a content hash in their names (so
 * they can be cached for good). Used by `scripts/build.ts` (the files then go into the binary)
 * and, in development, by the server itself on the first request for the page.
 */
export interface WebFile {
  /** URL path: `/index.html` or `/assets/<name>-<hash>.<ext>`. */
  path: string;
  /** Content type as the bundler gives it, e.g. `text/javascript;charset=utf-8`. */
  type: string;
  /** The file's text; for a font or an image, its bytes in base64 (`base64: true`). */
  text: string;
  base64?: boolean;
}

/** First-load JavaScript, gzip-compressed: the most a Raspberry Pi's browser downloads and parses before the app can be used. */
export const WEB_JS_BUDGET_BYTES = 150 * 1024;

const webRoot = join(import.meta.dir, '..', '..', 'web');

export async function bundleWeb(entry = join(webRoot, 'index.html')): Promise<WebFile[]> {
  const math = await mathAssets();
  const result = await Bun.build({
    entrypoints: [entry],
    minify: true,
    sourcemap: 'none',
    // Heavy parts (syntax highlighting, math, the rarer pages) are `import()`ed where they are
    // used: each becomes a chunk of its own, fetched then and not with the first load.
    splitting: true,
    define: { PARLEY_KATEX_CSS: JSON.stringify(math.cssPath) },
    // Absolute asset URLs: the same page is served at /c/<id>, where relative ones would break.
    publicPath: '/',
    naming: { entry: '[name].[ext]', chunk: 'assets/[name]-[hash].[ext]', asset: 'assets/[name]-[hash].[ext]' },
  });
  if (!result.success) throw new AggregateError(result.logs, 'the web app did not bundle');
  const bundled = await Promise.all(result.outputs.map(async (o) => ({ path: o.path.replace(/^\.?\//, '/'), type: o.type, text: await o.text() })));
  for (const f of bundled) if (f.path === '/index.html') f.text = withShellLinks(f.text);
  return [...bundled, ...math.files, ...(await appShellFiles(webRoot, bundled))];
}

/** The scripts the page loads at once: every `<script src>` and module preload of index.html. */
export function firstLoadScripts(files: readonly WebFile[]): WebFile[] {
  const html = files.find((f) => f.path === '/index.html')?.text ?? '';
  const wanted = new Set([...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="?modulepreload"?[^>]*\shref)="?([^"\s>]+)/g)].map((m) => m[1]));
  return files.filter((f) => wanted.has(f.path));
}

/** Gzip size of the first load's JavaScript; throws above the budget, so a build that grows past it fails. */
export function checkWebBudget(files: readonly WebFile[], budget = WEB_JS_BUDGET_BYTES): number {
  const scripts = firstLoadScripts(files);
  if (!scripts.length) throw new Error('the web bundle has no script the page loads');
  const bytes = scripts.reduce((sum, f) => sum + Bun.gzipSync(f.text, { level: 9 }).length, 0);
  if (bytes > budget)
    throw new Error(`the web app's first-load JavaScript is ${kb(bytes)} KB gzip-compressed, over its budget of ${kb(budget)} KB (docs/web.md)`);
  return bytes;
}

export const kb = (bytes: number) => (bytes / 1024).toFixed(1);
