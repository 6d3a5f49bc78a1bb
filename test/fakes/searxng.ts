/**
 * A local SearxNG: `GET /search?q=…&format=json` answers SearxNG's JSON shape
 * (`{query, number_of_results, results: [{url, title, content, engine, score}]}`), and
 * `GET /page/<n>` serves the HTML pages those results link to, for the research loop to read.
 */
export interface FakeSearxng {
  url: string;
  queries: string[];
  pagesRead: string[];
  /** Serve each page this many milliseconds late (a slow web site). */
  pageDelayMs: number;
  /** Answer every search with this HTTP status (a broken instance); 0: answer normally. */
  failStatus: number;
  stop(): void;
}

export function startFakeSearxng(): FakeSearxng {
  const fake: FakeSearxng = { url: '', queries: [], pagesRead: [], pageDelayMs: 0, failStatus: 0, stop: () => server.stop(true) };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === '/search') {
        if (url.searchParams.get('format') !== 'json') return new Response('format not allowed', { status: 403 });
        const q = url.searchParams.get('q') ?? '';
        fake.queries.push(q);
        if (fake.failStatus) return new Response('<html>Internal Server Error</html>', { status: fake.failStatus });
        const slug = encodeURIComponent(q.toLowerCase().replace(/\W+/g, '-'));
        const results = [1, 2, 3].map((i) => ({
          url: `${fake.url}/page/${slug}-${i}`,
          title: `${q} — result ${i}`,
          content: `Snippet ${i} about ${q}.`,
          engine: 'duckduckgo',
          score: 1 / i,
        }));
        return Response.json({ query: q, number_of_results: results.length, results, answers: [], suggestions: [] });
      }
      const page = url.pathname.match(/^\/page\/(.+)$/);
      if (page) {
        fake.pagesRead.push(page[1]!);
        if (fake.pageDelayMs) await Bun.sleep(fake.pageDelayMs);
        return new Response(`<html><head><title>Page ${page[1]}</title><script>var x=1</script></head><body><p>Facts from ${page[1]}.</p></body></html>`, {
          headers: { 'content-type': 'text/html; charset=utf-8' },
        });
      }
      return new Response('not found', { status: 404 });
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  return fake;
}
