/**
 * What the real-model tests put between Parley and llama-server (a scripted tool call, a hidden
 * `/props`, a held or cut stream): a server on 127.0.0.1 whose handler answers some requests
 * itself and forwards the rest with `forward`.
 */
export interface LoopbackProxy {
  /** The proxy's root, e.g. `http://127.0.0.1:PORT`. */
  url: string;
  /** What PARLEY_AI_BASE_URL takes. */
  apiUrl: string;
  stop(): void;
}

export function startLoopbackProxy(handle: (req: Request) => Response | Promise<Response>): LoopbackProxy {
  // A held answer must stay open for as long as the test waits, not Bun's 10 s.
  // An upstream that is gone (a template's llama-server stopped while a late request of Parley's,
  // such as a background context probe, was on its way) is a 502, as from any proxy: thrown from
  // the handler, it would be an uncaught error that fails the whole run after every cell passed.
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    fetch: handle,
    error: (err) => new Response(`upstream unreachable: ${err.message}`, { status: 502 }),
  });
  const url = `http://127.0.0.1:${server.port}`;
  return { url, apiUrl: `${url}/v1`, stop: () => server.stop(true) };
}

/** The request sent on to `upstream` (llama-server's root), same method, path and query; `body` when already read. */
export async function forward(upstream: string, req: Request, body?: string): Promise<Response> {
  const { pathname, search } = new URL(req.url);
  return fetch(`${upstream}${pathname}${search}`, {
    method: req.method,
    headers: { 'content-type': 'application/json' },
    body: body ?? (req.method === 'POST' ? await req.text() : undefined),
  });
}
