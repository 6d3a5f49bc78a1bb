import { safeFetch } from '../net/safe-fetch';

export interface ReadPageOptions {
  maxBytes: number;
  timeoutMs: number;
  /** Allow private, loopback and link-local addresses (PARLEY_FETCH_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Hosts that may resolve to private addresses anyway (PARLEY_FETCH_ALLOW_HOSTS). */
  allowHosts?: readonly string[];
}

export interface ReadPageResult {
  url: string;
  title: string;
  text: string;
}

/**
 * Read a web page for the research loop through the guarded fetch (http(s) only, every redirect
 * hop and DNS answer checked against private ranges, the connection pinned to the checked
 * address), keeping the first `maxBytes`. Answers `undefined` for anything refused or failed: a
 * page that cannot be read is simply not cited.
 */
export async function readPage(url: string, opts: ReadPageOptions, signal?: AbortSignal): Promise<ReadPageResult | undefined> {
  try {
    const res = await safeFetch(url, {
      signal,
      maxBytes: opts.maxBytes,
      truncate: true,
      timeoutMs: opts.timeoutMs,
      allowPrivate: opts.allowPrivate,
      allowHosts: opts.allowHosts,
      headers: { accept: 'text/html,text/plain;q=0.9,*/*;q=0.1', 'user-agent': 'Parley research' },
    });
    if (res.status < 200 || res.status >= 300) return undefined;
    const type = res.headers.get('content-type') ?? '';
    if (type && !/text\/|html|xml|json/.test(type)) return undefined;
    const raw = res.text();
    return /html|xml/.test(type) || /<html|<body|<p[ >]/i.test(raw.slice(0, 2000))
      ? { url: res.url, title: titleOf(raw), text: htmlToText(raw) }
      : { url: res.url, title: '', text: raw.trim() };
  } catch {
    return undefined;
  }
}

const titleOf = (html: string) => decodeEntities(html.match(/<title[^>]*>([\s\S]*?)<\/title>/i)?.[1] ?? '').trim();

export function htmlToText(html: string): string {
  return decodeEntities(
    html
      .replace(/<(script|style|noscript|svg|head)[\s\S]*?<\/\1>/gi, ' ')
      .replace(/<(br|\/p|\/div|\/li|\/h\d|\/tr)[^>]*>/gi, '\n')
      .replace(/<[^>]+>/g, ' '),
  )
    .replace(/[ \t\f\r]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n')
    .trim();
}

const decodeEntities = (s: string) =>
  s
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&');
