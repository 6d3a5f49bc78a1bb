import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Config } from '../config';
import { isPrivateAddress } from './address';
import { isRedirect, redirectHop, type Hop } from './keyed-fetch';

/**
 * Server-side fetches of URLs that users (or a model acting for them) chose: deep-research page
 * reads, webhooks. Without a guard such a fetch is a way into the self-hoster's network (router
 * admin pages, cloud metadata at 169.254.169.254, Parley itself on 127.0.0.1).
 *
 * Every hop is checked: the host is resolved first and EVERY answer must be public; the request
 * then goes to the checked address (the Host header and TLS server name stay the original
 * name), so a second, different DNS answer cannot slip in between check and connect; redirects
 * are followed by hand and each target is checked again. Headers that carry a credential
 * (`Authorization`, API keys, cookies) go to the first URL's origin only: a redirect elsewhere is
 * followed without them (src/net/keyed-fetch.ts).
 */

export type FetchRefusal = 'SCHEME' | 'PRIVATE_ADDRESS' | 'DNS' | 'TOO_MANY_REDIRECTS' | 'TOO_LARGE' | 'TIMEOUT';

export class SafeFetchError extends Error {
  constructor(
    readonly reason: FetchRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'SafeFetchError';
  }
}

export interface LookupAnswer {
  address: string;
  family: number;
}

export interface SafeFetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Largest response body read, in bytes (default 5 MiB); more → SafeFetchError TOO_LARGE, or cut there with `truncate`. */
  maxBytes?: number;
  /** Keep the first `maxBytes` of a longer body instead of refusing it (page reads want the start of a page). */
  truncate?: boolean;
  /** Whole-request deadline including redirects (default 15 s). */
  timeoutMs?: number;
  /** The caller's own stop (a cancelled research turn): aborts the request at once, rethrown as is. */
  signal?: AbortSignal;
  maxRedirects?: number;
  /** Reach private addresses too (config PARLEY_FETCH_ALLOW_PRIVATE). */
  allowPrivate?: boolean;
  /** Host names or IPs that may resolve to private addresses (config PARLEY_FETCH_ALLOW_HOSTS). */
  allowHosts?: readonly string[];
  /** DNS resolver; tests pass a fake one. */
  lookup?: (host: string) => Promise<LookupAnswer[]>;
  /** Extra TLS options (tests pass a private CA). */
  tls?: { ca?: string };
}

export interface SafeFetchResult {
  /** The URL of the final hop, after redirects. */
  url: string;
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  text(): string;
  json<T = unknown>(): T;
}

/** The guard's settings from the config table: `safeFetch(url, {...fetchPolicy(deps.config), maxBytes})`. */
export const fetchPolicy = (config: Pick<Config, 'fetchAllowPrivate' | 'fetchAllowHosts'>) => ({
  allowPrivate: config.fetchAllowPrivate,
  allowHosts: config.fetchAllowHosts,
});

const systemLookup = async (host: string): Promise<LookupAnswer[]> => dnsLookup(host, { all: true, verbatim: true });

/** Resolve `host` and pick the address to connect to, refusing when any answer is private. */
export async function resolveChecked(host: string, opts: Pick<SafeFetchOptions, 'allowPrivate' | 'allowHosts' | 'lookup'>): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  const allowed = opts.allowPrivate || (opts.allowHosts ?? []).some((h) => h.toLowerCase() === bare.toLowerCase());
  if (isIP(bare)) {
    if (!allowed && isPrivateAddress(bare)) throw new SafeFetchError('PRIVATE_ADDRESS', `${bare} is a private address`);
    return bare;
  }
  let answers: LookupAnswer[];
  try {
    answers = await (opts.lookup ?? systemLookup)(bare);
  } catch (err) {
    throw new SafeFetchError('DNS', `cannot resolve ${bare}: ${(err as Error).message}`);
  }
  if (answers.length === 0) throw new SafeFetchError('DNS', `cannot resolve ${bare}`);
  // All answers, not the first: a name with one public and one private answer would otherwise
  // let the connection pick the private one.
  const bad = answers.find((a) => isPrivateAddress(a.address));
  if (bad && !allowed) throw new SafeFetchError('PRIVATE_ADDRESS', `${bare} resolves to a private address (${bad.address})`);
  return answers[0]!.address;
}

async function readBounded(res: Response, maxBytes: number, truncate = false): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes && !truncate) {
    await res.body?.cancel();
    throw new SafeFetchError('TOO_LARGE', `response is ${declared} bytes, more than ${maxBytes}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body) {
    const reader = res.body.getReader();
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      if (size + value.byteLength > maxBytes) {
        await reader.cancel().catch(() => undefined);
        if (!truncate) throw new SafeFetchError('TOO_LARGE', `response is more than ${maxBytes} bytes`);
        chunks.push(value.subarray(0, maxBytes - size));
        size = maxBytes;
        break;
      }
      size += value.byteLength;
      chunks.push(value);
    }
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

export async function safeFetch(input: string | URL, opts: SafeFetchOptions = {}): Promise<SafeFetchResult> {
  const maxBytes = opts.maxBytes ?? 5 * 1024 * 1024;
  const maxRedirects = opts.maxRedirects ?? 5;
  const deadline = AbortSignal.timeout(opts.timeoutMs ?? 15_000);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  let hop: Hop = { url: new URL(input), method: (opts.method ?? 'GET').toUpperCase(), headers: new Headers(opts.headers), body: opts.body };
  const origin = hop.url.origin;
  try {
    for (let redirects = 0; ; redirects++) {
      const { url } = hop;
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new SafeFetchError('SCHEME', `only http and https URLs can be fetched, not ${url.protocol}`);
      const address = await resolveChecked(url.hostname, opts);
      const pinned = new URL(url);
      pinned.hostname = isIP(address) === 6 ? `[${address}]` : address;
      const headers = new Headers(hop.headers);
      headers.set('host', url.host);
      const res = await fetch(pinned, {
        method: hop.method,
        body: hop.body,
        headers,
        redirect: 'manual',
        signal,
        ...(url.protocol === 'https:' ? { tls: { serverName: url.hostname.replace(/^\[|\]$/g, ''), ...opts.tls } } : {}),
      } as RequestInit);
      const location = res.headers.get('location');
      if (isRedirect(res.status) && location) {
        await res.body?.cancel();
        if (redirects >= maxRedirects) throw new SafeFetchError('TOO_MANY_REDIRECTS', `more than ${maxRedirects} redirects`);
        // Followed wherever it leads (each hop checked above), but credentials stay with the first origin.
        try {
          hop = redirectHop(hop, res.status, location, origin, 'strip');
        } catch (err) {
          throw new SafeFetchError('SCHEME', (err as Error).message);
        }
        continue;
      }
      const bytes = await readBounded(res, maxBytes, opts.truncate);
      const finalUrl = hop.url.toString();
      return {
        url: finalUrl,
        status: res.status,
        headers: res.headers,
        bytes,
        text: () => new TextDecoder().decode(bytes),
        json: <T>() => JSON.parse(new TextDecoder().decode(bytes)) as T,
      };
    }
  } catch (err) {
    opts.signal?.throwIfAborted();
    if (deadline.aborted && !(err instanceof SafeFetchError))
      throw new SafeFetchError('TIMEOUT', `no complete answer within ${opts.timeoutMs ?? 15_000} ms`);
    throw err;
  }
}
