/**
 * A local server answering the two requests `parley doctor` makes of providers: an
 * OpenAI-compatible `GET /v1/models` (as OpenAI, Ollama and llama.cpp's server answer it) and
 * SearxNG's `GET /search?format=json` (403 when the json format is not enabled, as SearxNG does).
 */
export function startProviderEndpoints(opts: { apiKey?: string; models?: string[]; searxJson?: boolean } = {}) {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === '/v1/models') {
        if (opts.apiKey && req.headers.get('authorization') !== `Bearer ${opts.apiKey}`)
          return Response.json({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }, { status: 401 });
        return Response.json({ object: 'list', data: (opts.models ?? []).map((id) => ({ id, object: 'model', created: 0, owned_by: 'library' })) });
      }
      if (url.pathname === '/search') {
        if (url.searchParams.get('format') === 'json' && !opts.searxJson) return new Response('Forbidden', { status: 403 });
        return Response.json({ query: url.searchParams.get('q'), number_of_results: 1, results: [{ url: 'https://example.org/', title: 'Example', content: 'An example.' }] });
      }
      return new Response('Not Found', { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
