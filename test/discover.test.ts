import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext } from './helpers';
import { updateUser } from '../src/account/account.store';
import { discoverServers, kindByName, type FoundServer } from '../src/connections/discover';
import { startLocalModelServer } from './fakes/local-model-servers';
import { answerChecker } from './support/output-schemas';
import { cachedLlamaServerDir, startLlamaServer, testModelPath } from '../scripts/real-models/llama-server';

// Real sockets and, when it is built, a real llama-server; nothing here asserts on time.
setDefaultTimeout(60_000);

const started: { stop(): unknown }[] = [];
afterAll(() => {
  for (const s of started) s.stop();
});
function serve(...args: Parameters<typeof startLocalModelServer>) {
  const s = startLocalModelServer(...args);
  started.push(s);
  return s;
}

/** The servers found at `port` (the usual ports are probed too, and this machine may run something there). */
const at = (servers: FoundServer[], port: number) => servers.filter((s) => s.port === port);

describe('looking for AI servers on this machine', () => {
  test('admin/discoverServers: an Ollama and a llama.cpp server on loopback, with their models and the connections they make', async () => {
    const ollama = serve('ollama', ['qwen2.5:7b', 'nomic-embed-text:latest']);
    const llama = serve('llama.cpp', ['qwen2.5-7b']);
    const ctx = await createTestContext({ users: [{ email: 'root@example.org' }, { email: 'ann@example.org' }], config: { discoverPorts: [ollama.port, llama.port] } });
    const [root, ann] = ctx.users;
    await ctx.store.write((tx) => updateUser(tx, root!.user.id, { isAdmin: true }, Date.now()));

    expect((await ctx.json('admin/discoverServers', {}, ann)).status).toBe(403);
    const { status, body } = await ctx.json('admin/discoverServers', {}, root);
    expect(status).toBe(200);
    expect(body.ports).toEqual(expect.arrayContaining([11434, 8080, 1234, 8000, 8880, ollama.port, llama.port]));
    expect(Number.isInteger(body.tookMs)).toBe(true);
    const base = (port: number) => `http://127.0.0.1:${port}/v1`;
    expect(at(body.servers, ollama.port)).toEqual([
      {
        server: 'ollama',
        label: 'Ollama',
        version: '0.6.8',
        host: '127.0.0.1',
        port: ollama.port,
        connections: [
          {
            name: `ollama-${ollama.port}`,
            kind: 'chat',
            api: 'openai-chat',
            baseUrl: base(ollama.port),
            models: ['qwen2.5:7b'],
            addCommand: `parley connection add --name ollama-${ollama.port} --kind chat --api openai-chat --base-url ${base(ollama.port)}`,
          },
          {
            name: `ollama-${ollama.port}-embeddings`,
            kind: 'embeddings',
            api: 'openai',
            baseUrl: base(ollama.port),
            models: ['nomic-embed-text:latest'],
            addCommand: `parley connection add --name ollama-${ollama.port}-embeddings --kind embeddings --api openai --base-url ${base(ollama.port)}`,
          },
        ],
      },
    ]);
    expect(at(body.servers, llama.port)).toMatchObject([
      { server: 'llama.cpp', label: 'llama.cpp server', version: 'b6000-abcdef0', connections: [{ kind: 'chat', api: 'openai-chat', baseUrl: base(llama.port), models: ['qwen2.5-7b'] }] },
    ]);
    expect(body.unrecognised.filter((u: { port: number }) => [ollama.port, llama.port].includes(u.port))).toEqual([]);
    // The answer is what /api/openapi.json says it is (ports and times integers, voices optional).
    const doc = await (await ctx.app.handle(new Request('http://localhost/api/openapi.json'))).json();
    expect(answerChecker(doc)('admin/discoverServers', body)).toEqual([]);
  });

  test('vLLM, LM Studio, Speaches and Kokoro are told apart by what they answer; a web server that is no AI server is said to be one', async () => {
    const vllm = serve('vllm', ['Qwen/Qwen2.5-7B-Instruct']);
    const lm = serve('lm-studio', ['qwen2.5-7b-instruct', 'text-embedding-nomic-embed-text-v1.5']);
    const speaches = serve('speaches', ['Systran/faster-whisper-small', 'speaches-ai/Kokoro-82M-v1.0-ONNX']);
    const kokoro = serve('kokoro', ['kokoro', 'tts-1']);
    const web = serve('not-ai');
    const found = await discoverServers({ extraPorts: [vllm.port, lm.port, speaches.port, kokoro.port, web.port] });
    const summary = (port: number) => at(found.servers, port).map((s) => ({ server: s.server, offers: s.connections.map((c) => [c.kind, c.api, c.models, c.voices ?? []]) }));
    expect(summary(vllm.port)).toEqual([{ server: 'vllm', offers: [['chat', 'openai-chat', ['Qwen/Qwen2.5-7B-Instruct'], []]] }]);
    expect(summary(lm.port)).toEqual([
      { server: 'lm-studio', offers: [['chat', 'openai-chat', ['qwen2.5-7b-instruct'], []], ['embeddings', 'openai', ['text-embedding-nomic-embed-text-v1.5'], []]] },
    ]);
    expect(summary(speaches.port)).toEqual([
      { server: 'speaches', offers: [['stt', 'openai', ['Systran/faster-whisper-small'], []], ['tts', 'openai', ['speaches-ai/Kokoro-82M-v1.0-ONNX'], ['af_heart']]] },
    ]);
    expect(summary(kokoro.port)).toEqual([{ server: 'kokoro', offers: [['tts', 'openai', ['kokoro', 'tts-1'], ['af_bella', 'af_sky', 'bm_george']]] }]);
    expect(at(found.servers, web.port)).toEqual([]);
    expect(found.unrecognised).toContainEqual({ host: '127.0.0.1', port: web.port });
  });

  test('an Ollama with nothing pulled yet is still offered as a chat connection, with no models', async () => {
    const ollama = serve('ollama', []);
    const found = await discoverServers({ extraPorts: [ollama.port] });
    expect(at(found.servers, ollama.port)[0]!.connections).toMatchObject([{ kind: 'chat', models: [] }]);
  });

  test('a server that does not answer in time is left out: the probe ends without waiting for it', async () => {
    let answered = false;
    const slow = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch() {
        await Bun.sleep(10_000);
        answered = true;
        return Response.json({ object: 'list', data: [] });
      },
    });
    started.push({ stop: () => slow.stop(true) });
    const found = await discoverServers({ extraPorts: [slow.port!] });
    expect(answered).toBe(false);
    expect(at(found.servers, slow.port!)).toEqual([]);
    expect(found.unrecognised.map((u) => u.port)).not.toContain(slow.port);
  });

  test('parley connection discover: the same, printed with the command that adds each, or as JSON', async () => {
    const ollama = serve('ollama', ['llama3.2:3b']);
    const cli = async (...args: string[]) => {
      const p = Bun.spawn([process.execPath, join(import.meta.dir, '../cli/main.ts'), 'connection', 'discover', ...args], {
        env: { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: mkdtempSync(join(tmpdir(), 'parley-discover-')), PARLEY_DISCOVER_PORTS: String(ollama.port) },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
      expect(code).toBe(0);
      return out;
    };
    const text = await cli();
    expect(text).toContain(`Ollama 0.6.8 at 127.0.0.1:${ollama.port}\n  chat: llama3.2:3b\n    parley connection add --name ollama-${ollama.port} --kind chat --api openai-chat --base-url http://127.0.0.1:${ollama.port}/v1`);
    const json = JSON.parse(await cli('--json'));
    expect(at(json.servers, ollama.port)[0]!.connections[0]!.models).toEqual(['llama3.2:3b']);
  });

  test('model names say what a model is for where the server does not', () => {
    expect(['llama3.2:3b', 'qwen2.5-coder', 'mistral-small'].map(kindByName)).toEqual(['chat', 'chat', 'chat']);
    expect(['nomic-embed-text', 'bge-m3', 'all-minilm', 'mxbai-embed-large'].map(kindByName)).toEqual(['embeddings', 'embeddings', 'embeddings', 'embeddings']);
    expect(['whisper-1', 'Systran/faster-whisper-small'].map(kindByName)).toEqual(['stt', 'stt']);
    expect(['tts-1', 'kokoro', 'en_US-amy-medium-piper'].map(kindByName)).toEqual(['tts', 'tts', 'tts']);
    expect(['stable-diffusion-xl', 'flux.1-schnell'].map(kindByName)).toEqual(['images', 'images']);
  });

  const llamaDir = cachedLlamaServerDir();
  if (!llamaDir) console.warn('discover.test.ts: no cached llama-server (scripts/real-models/build-llama-server.sh builds one); the real-server test is skipped');
  test.skipIf(!llamaDir)('the real llama-server, on a port of its own, through PARLEY_DISCOVER_PORTS', async () => {
    const llama = await startLlamaServer({ dir: llamaDir!, model: testModelPath(), contextTokens: 512 });
    try {
      const port = Number(new URL(llama.url).port);
      const found = await discoverServers({ extraPorts: [port] });
      expect(at(found.servers, port)).toMatchObject([
        { server: 'llama.cpp', host: '127.0.0.1', version: expect.stringMatching(/^b\d+-/), connections: [{ name: `llama-cpp-${port}`, kind: 'chat', api: 'openai-chat', baseUrl: `${llama.url}/v1`, models: ['tiny'] }] },
      ]);
    } finally {
      await llama.stop();
    }
  });
});

