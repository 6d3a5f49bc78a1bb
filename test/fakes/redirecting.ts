/**
 * A server that sends requests to another origin, and that other origin, which records what
 * reaches it. A request to `url` whose path matches `redirects` is answered with a redirect
 * (`status`, default 302) to the same path and query on `elsewhere` (another port: another
 * origin); any other request is passed to `upstream` (another fake: the OpenAI, images, OAuth or
 * S3 one) as it came, so that a real exchange can go on and only one step of it be redirected
 * (no upstream: a plain 200). `elsewhere` records every request with all its headers and its
 * body, and answers `answer`.
 */

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface RedirectingFake {
  /** The first origin (`http://127.0.0.1:<port>`). */
  url: string;
  /** The second origin, which records. */
  elsewhere: string;
  /** Which paths are redirected (default: all). */
  redirects: RegExp;
  status: 301 | 302 | 303 | 307 | 308;
  /** What reached the first origin, headers included (to prove the key was sent there). */
  first: Received[];
  /** What reached the second origin. */
  received: Received[];
  /** The second origin's answer. */
  answer: (req: Received) => Response;
  stop(): void;
}

async function record(req: Request): Promise<Received> {
  const url = new URL(req.url);
  return { method: req.method, path: url.pathname + url.search, headers: Object.fromEntries(req.headers), body: req.body ? Buffer.from(await req.arrayBuffer()).toString('latin1') : '' };
}

export function startRedirecting(upstream?: string): RedirectingFake {
  const fake: RedirectingFake = {
    url: '',
    elsewhere: '',
    redirects: /.*/,
    status: 302,
    first: [],
    received: [],
    answer: () => Response.json({ error: { message: 'the wrong server', type: 'invalid_request_error' } }, { status: 404 }),
    stop: () => {
      front.stop(true);
      back.stop(true);
    },
  };
  const back = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const got = await record(req);
      fake.received.push(got);
      return fake.answer(got);
    },
  });
  const front = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = req.body ? await req.arrayBuffer() : undefined;
      fake.first.push({ method: req.method, path: url.pathname + url.search, headers: Object.fromEntries(req.headers), body: body ? Buffer.from(body).toString('latin1') : '' });
      if (fake.redirects.test(url.pathname)) return new Response(null, { status: fake.status, headers: { location: `${fake.elsewhere}${url.pathname}${url.search}` } });
      if (!upstream) return new Response('not redirected');
      const headers = new Headers(req.headers);
      headers.delete('host');
      return fetch(`${upstream}${url.pathname}${url.search}`, { method: req.method, headers, body, redirect: 'manual' });
    },
  });
  fake.url = `http://127.0.0.1:${front.port}`;
  fake.elsewhere = `http://127.0.0.1:${back.port}`;
  return fake;
}

/** Every credential-looking thing a recorded request carried: headers and URL user info. */
export const credentialsIn = (r: Received): string[] =>
  Object.entries(r.headers)
    .filter(([name]) => /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$/i.test(name))
    .map(([name, value]) => `${name}: ${value}`);
