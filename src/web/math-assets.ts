import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { WebFile } from './bundle-web';

/**
 * KaTeX's stylesheet and fonts, as assets of their own: the page loads them only when an answer
 * holds math (web/src/shared/markdown-extras.ts adds the `<link>`). Bun's CSS bundler would inline
 * all twenty fonts into the stylesheet (370 KB, every font fetched for one formula); as files,
 * the browser fetches only the fonts a formula uses. WOFF2 only: every browser that runs the app
 * reads it, so the WOFF and TTF fallbacks are dropped from the `src` lists.
 */
export async function mathAssets(): Promise<{ cssPath: string; files: WebFile[] }> {
  // Resolved at run time, not by `require.resolve`: the bundler follows that into the executable,
  // which then carried the stylesheet with all sixty fonts inlined (1.4 MB) beside the web app
  // that already holds them (bench/RESULTS.md, "Binary size, again").
  const dist = dirname(Bun.resolveSync('katex/dist/katex.min.css', import.meta.dir));
  const files: WebFile[] = [];
  const fontPaths = new Map<string, string>();
  for (const name of readdirSync(join(dist, 'fonts')).filter((n) => n.endsWith('.woff2'))) {
    const bytes = await Bun.file(join(dist, 'fonts', name)).bytes();
    const path = `/assets/${name.replace(/\.woff2$/, '')}-${hashOf(bytes)}.woff2`;
    fontPaths.set(name, path);
    files.push({ path, type: 'font/woff2', text: Buffer.from(bytes).toString('base64'), base64: true });
  }
  const css = (await Bun.file(join(dist, 'katex.min.css')).text())
    .replace(/,url\(fonts\/[^)]+\.(?:woff|ttf)\) format\("(?:woff|truetype)"\)/g, '')
    .replace(/url\(fonts\/([^)]+\.woff2)\)/g, (_, name: string) => `url(${fontPaths.get(name) ?? name})`);
  const cssPath = `/assets/katex-${hashOf(new TextEncoder().encode(css))}.css`;
  files.push({ path: cssPath, type: 'text/css;charset=utf-8', text: css });
  return { cssPath, files };
}

const hashOf = (bytes: Uint8Array) => Bun.hash(bytes).toString(36).slice(0, 8);
