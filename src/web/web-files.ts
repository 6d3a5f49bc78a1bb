import type { Logger } from '../log';
import { bundleWeb, type WebFile } from './bundle-web';
import { embeddedWeb } from './embedded-web';

/** One file as it is served: its bytes, a gzip copy when that pays, and its cache headers. */
export interface ServedFile {
  body: Uint8Array;
  gzip: Uint8Array | undefined;
  type: string;
  etag: string;
  cacheControl: string;
}

/** Hashed names change with their content: a browser may keep them for good. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The page names the current hashed files, so it is asked for again every time (an ETag keeps that cheap). */
const REVALIDATE = 'no-cache';

function serve(path: string, type: string, body: Uint8Array<ArrayBuffer>, compressed: boolean): ServedFile {
  // Compressed once, when the files are loaded: a few milliseconds for the whole app, then
  // every answer is a lookup. Tiny files are not worth the header, and fonts and PNGs are
  // compressed already.
  const gzip = body.length > 1024 && !compressed ? Bun.gzipSync(body, { level: 9 }) : undefined;
  return {
    body,
    gzip,
    type,
    etag: `"${Bun.hash(body).toString(36)}"`,
    cacheControl: path.startsWith('/assets/') ? IMMUTABLE : REVALIDATE,
  };
}

const bodyOf = (file: WebFile) => (file.base64 ? new Uint8Array(Buffer.from(file.text, 'base64')) : new TextEncoder().encode(file.text));

/** The files by URL path: the binary's embedded bundle, or in development a fresh one of `web/`. */
export async function loadWebFiles(log: Logger): Promise<Map<string, ServedFile>> {
  if (embeddedWeb.length) {
    const served = await Promise.all(embeddedWeb.map(async (f) => serve(f.path, f.type, await Bun.file(f.file).bytes(), f.compressed)));
    return new Map(served.map((file, i) => [embeddedWeb[i]!.path, file]));
  }
  const started = performance.now();
  const files = await bundleWeb();
  log.info('web app bundled for development', { ms: Math.round(performance.now() - started) });
  return new Map(files.map((f) => [f.path, serve(f.path, f.type, bodyOf(f), !!f.base64)]));
}
