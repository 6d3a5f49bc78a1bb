import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export interface ReadPageOptions {
  maxBytes: number;
  timeoutMs: number;
  /** Allow private, loopback and link-local addresses (PARLEY_FETCH_ALLOW_PRIVATE). */
  allowPrivate: boolean;
}

export interface ReadPageResult {
  url: string;
  title: string;
  text: string;
}

/**
 * Read a web page for the research loop: http(s) only, every redirect hop and every DNS answer
 * checked against private ranges, the body cut at `maxBytes`, the whole read bounded by
 * `timeoutMs`. Answers `undefined` for anything refused or failed: a page that cannot be read
 * is simply not cited. (A shared guarded fetch may replace the checks here later.)
 */
export async function readPage(url: string, opts: ReadPageOptions): Promise<ReadPageResult | undefined> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  let current = url;
  try {
    for (let hop = 0; hop < 5; hop++) {
      const u = new URL(current);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
      if (!opts.allowPrivate && !(await isPublicHost(u.hostname))) return undefined;
      const res = await fetch(u, { redirect: 'manual', signal, headers: { accept: 'text/html,text/plain;q=0.9,*/*;q=0.1', 'user-agent': 'Parley research' } });
      if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
        await res.body?.cancel();
        current = new URL(res.headers.get('location')!, u).toString();
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel();
        return undefined;
      }
      const type = res.headers.get('content-type') ?? '';
      if (type && !/text\/|html|xml|json/.test(type)) {
        await res.body?.cancel();
        return undefined;
      }
      const raw = await readBounded(res, opts.maxBytes);
      return /html|xml/.test(type) || /<html|<body|<p[ >]/i.test(raw.slice(0, 2000))
        ? { url: current, title: titleOf(raw), text: htmlToText(raw) }
        : { url: current, title: '', text: raw.trim() };
    }
  } catch {
    return undefined;
  }
  return undefined;
}

async function readBounded(res: Response, maxBytes: number): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < maxBytes) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
  const all = new Uint8Array(Math.min(size, maxBytes));
  let at = 0;
  for (const c of chunks) {
    const part = c.subarray(0, all.length - at);
    all.set(part, at);
    at += part.length;
    if (at >= all.length) break;
  }
  return new TextDecoder().decode(all);
}

async function isPublicHost(hostname: string): Promise<boolean> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return false;
  const addrs = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  return addrs.length > 0 && addrs.every((a) => !isPrivateAddress(a));
}

/** Loopback, private, link-local, CGNAT, unspecified, multicast and IPv4-mapped forms of those. */
export function isPrivateAddress(addr: string): boolean {
  const a = addr.toLowerCase();
  const mapped = a.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/);
  if (mapped) return isPrivateAddress(mapped[1]!);
  if (isIP(a) === 4) {
    const [p0, p1] = a.split('.').map(Number) as [number, number];
    return (
      p0 === 0 || p0 === 10 || p0 === 127 || (p0 === 169 && p1 === 254) || (p0 === 172 && p1 >= 16 && p1 <= 31) ||
      (p0 === 192 && p1 === 168) || (p0 === 100 && p1 >= 64 && p1 <= 127) || p0 >= 224
    );
  }
  return a === '::' || a === '::1' || a.startsWith('fe8') || a.startsWith('fe9') || a.startsWith('fea') || a.startsWith('feb') || a.startsWith('fc') || a.startsWith('fd') || a.startsWith('ff');
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
