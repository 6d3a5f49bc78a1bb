import { isIP } from 'node:net';
import { resolveChecked, type LookupAnswer } from '../net/safe-fetch';
import { McpError } from './mcp-errors';

/**
 * The fetch Parley hands the SDK's HTTP transports. What the SDK streams (event streams that stay
 * open for a long call) must stream here too, so this is not `safeFetch`, which reads whole
 * bodies; it does the same checks on every request:
 *
 * - **Reach.** For a user's server, the host is resolved and every answer must be public (unless
 *   the admin allows local addresses); the request goes to the checked address, so a second DNS
 *   answer cannot slip in. Redirects are not followed (an MCP endpoint that moves is a setting
 *   to fix, and a redirect must not carry the headers elsewhere).
 * - **Headers.** The server's sealed headers are added here (the user's bearer token comes
 *   through the SDK's `AuthProvider`, which also retries once after a refresh).
 * - **Size.** A body longer than `maxBytes` is cut off with an error, before it is all in memory.
 */
export interface McpFetchOptions {
  /** Set for users' servers: the SSRF guard's policy. */
  guard?: { allowPrivate: boolean; allowHosts: readonly string[]; lookup?: (host: string) => Promise<LookupAnswer[]> };
  headers?: Record<string, string>;
  maxBytes: number;
  serverName: string;
}

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export function mcpFetch(opts: McpFetchOptions): FetchLike {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input.href);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new McpError(`The MCP server ${opts.serverName} has no http(s) address.`, 'refused');
    const headers = new Headers(init?.headers);
    // The transport's own (Authorization, the session, the protocol version) win over the admin's.
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (!headers.has(k)) headers.set(k, v);
    let target = url;
    let tls: { serverName: string } | undefined;
    if (opts.guard) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const address = await resolveChecked(host, opts.guard);
      target = new URL(url);
      target.hostname = isIP(address) === 6 ? `[${address}]` : address;
      headers.set('host', url.host);
      if (url.protocol === 'https:') tls = { serverName: host };
    }
    const res = await fetch(target, { ...init, headers, redirect: 'manual', ...(tls ? { tls } : {}) } as RequestInit);
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => undefined);
      throw new McpError(`The MCP server ${opts.serverName} answered with a redirect (HTTP ${res.status}); set its address to where it leads.`, 'refused', res.headers.get('location') ?? undefined);
    }
    return capped(res, opts.maxBytes, opts.serverName);
  };
}

/** The response with its body counted as it streams: past `maxBytes` the stream errors. */
function capped(res: Response, maxBytes: number, name: string): Response {
  if (!res.body) return res;
  const tooLarge = () => new McpError(`The MCP server ${name} answered more than ${maxBytes} bytes (PARLEY_MCP_RESULT_MAX_BYTES), so Parley stopped reading it.`, 'too_large');
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    void res.body.cancel().catch(() => undefined);
    throw tooLarge();
  }
  let seen = 0;
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
