/**
 * Local AI servers as "look for servers on this machine" meets them (src/connections/discover.ts):
 * each answers the GETs the real one answers, with the real one's JSON shapes (taken from their
 * APIs: Ollama's /api/tags and /api/version, llama.cpp's server's /props, /v1/models and
 * /health, vLLM's owned_by and /version, LM Studio's /api/v0/models, Speaches' task field,
 * Kokoro-FastAPI's /v1/audio/voices), and 404 for anything else, as they do. On 127.0.0.1, at a
 * port of the system's choosing; `slowMs` delays every answer (a server that hangs).
 */
export type FakeServerKind = 'ollama' | 'llama.cpp' | 'vllm' | 'lm-studio' | 'speaches' | 'kokoro' | 'not-ai';

const models = (data: object[]) => ({ object: 'list', data });

function routes(kind: FakeServerKind, names: string[]): Record<string, unknown> {
  switch (kind) {
    case 'ollama':
      return {
        '/api/version': { version: '0.6.8' },
        '/api/tags': {
          models: names.map((name) => ({
            name,
            model: name,
            modified_at: '2026-01-01T00:00:00Z',
            size: 1_000_000,
            digest: 'sha256:0',
            details: { format: 'gguf', family: /embed/.test(name) ? 'nomic-bert' : 'qwen2', families: [/embed/.test(name) ? 'nomic-bert' : 'qwen2'], parameter_size: '7B', quantization_level: 'Q4_K_M' },
          })),
        },
        '/v1/models': models(names.map((id) => ({ id, object: 'model', created: 0, owned_by: 'library' }))),
      };
    case 'llama.cpp':
      return {
        '/health': { status: 'ok' },
        '/props': { default_generation_settings: { n_ctx: 4096, params: {} }, total_slots: 1, model_alias: names[0], model_path: `/models/${names[0]}.gguf`, modalities: { vision: false, audio: false }, build_info: 'b6000-abcdef0' },
        '/v1/models': {
          models: names.map((name) => ({ name, model: name, type: 'model', capabilities: ['completion'], details: { format: 'gguf' } })),
          object: 'list',
          data: names.map((id) => ({ id, aliases: [id], object: 'model', created: 0, owned_by: 'llamacpp', meta: { n_ctx_train: 4096 } })),
        },
      };
    case 'vllm':
      return { '/version': { version: '0.8.5' }, '/v1/models': models(names.map((id) => ({ id, object: 'model', created: 0, owned_by: 'vllm', root: id, parent: null, max_model_len: 8192 }))) };
    case 'lm-studio':
      return {
        '/v1/models': models(names.map((id) => ({ id, object: 'model', owned_by: 'organization_owner' }))),
        '/api/v0/models': models(names.map((id) => ({ id, object: 'model', type: /embed/.test(id) ? 'embeddings' : 'llm', publisher: 'lmstudio-community', state: 'not-loaded' }))),
      };
    case 'speaches':
      return {
        '/health': 'OK',
        '/v1/models': models(names.map((id) => ({ id, created: 0, object: 'model', owned_by: id.split('/')[0], language: ['en'], task: /whisper/.test(id) ? 'automatic-speech-recognition' : 'text-to-speech' }))),
        '/v1/audio/voices': { voices: [{ name: 'af_heart', model_id: 'speaches-ai/Kokoro-82M-v1.0-ONNX', id: 'af_heart' }], object: 'list' },
      };
    case 'kokoro':
      return {
        '/health': { status: 'healthy' },
        '/v1/models': models(names.map((id) => ({ id, object: 'model', created: 1686935002, owned_by: 'kokoro' }))),
        '/v1/audio/voices': { voices: ['af_bella', 'af_sky', 'bm_george'] },
      };
    case 'not-ai':
      return {};
  }
}

export function startLocalModelServer(kind: FakeServerKind, names: string[] = [], opts: { slowMs?: number } = {}) {
  const answers = routes(kind, names);
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      if (opts.slowMs) await Bun.sleep(opts.slowMs);
      const body = req.method === 'GET' ? answers[new URL(req.url).pathname] : undefined;
      if (body === undefined) return kind === 'not-ai' ? new Response('<h1>It works</h1>', { status: 404, headers: { 'content-type': 'text/html' } }) : Response.json({ error: 'not found' }, { status: 404 });
      return typeof body === 'string' ? new Response(body) : Response.json(body, kind === 'llama.cpp' ? { headers: { server: 'llama.cpp' } } : {});
    },
  });
  return { port: server.port!, url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
