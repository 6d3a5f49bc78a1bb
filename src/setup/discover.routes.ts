import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { discoverServers, USUAL_PORTS } from '../connections/discover';

// "Look for servers on this machine" (src/connections/discover.ts): the setup page's second step
// and the CLI's `parley discover`. docs/ai-providers.md, "Finding servers on this machine".

const literals = <T extends string>(values: readonly T[]) => t.Union(values.map((v) => t.Literal(v)));

const OfferSchema = t.Object({
  name: t.String({ description: 'A suggested connection name' }),
  kind: literals(['chat', 'embeddings', 'images', 'stt', 'tts'] as const),
  api: literals(['openai-chat', 'openai'] as const),
  baseUrl: t.String({ description: 'The API root with its version prefix (`http://127.0.0.1:11434/v1`)' }),
  models: t.Array(t.String(), { description: 'The models the server lists for this kind (may be empty: an Ollama with nothing pulled yet)' }),
  voices: t.Optional(t.Array(t.String(), { description: 'Text to speech: the voices the server lists' })),
  addCommand: t.String({ description: 'The `parley connection add` command that adds this connection' }),
});

const ServerSchema = t.Object({
  server: literals(['ollama', 'llama.cpp', 'lm-studio', 'vllm', 'localai', 'speaches', 'kokoro', 'openai-compatible'] as const),
  label: t.String({ description: 'The server\'s name for people ("Ollama")' }),
  version: t.Union([t.String(), t.Null()]),
  host: t.String({ description: '`127.0.0.1` or `::1`' }),
  port: t.Integer(),
  connections: t.Array(OfferSchema),
});

export const discoverOperations = [
  defineOperation({
    path: 'admin/discoverServers',
    admin: true,
    summary: 'Look for AI servers on this machine (loopback only) and offer the connections they would make',
    description: `Admins only: any other caller is answered 403. Probes 127.0.0.1 and ::1 only, at the usual ports (${USUAL_PORTS.join(', ')}) and those of \`PARLEY_DISCOVER_PORTS\`, with GETs of their model lists (about 500 ms each, in parallel, the whole probe bounded at about 1.5 s), and says what answered: Ollama, llama.cpp's server, LM Studio, vLLM, LocalAI, Speaches, Kokoro-FastAPI, or another OpenAI-compatible server, each with its models grouped into the connections it would make (chat, embeddings, images, speech to text, text to speech). Nothing is added: each offer carries the \`parley connection add\` command that adds it.`,
    input: t.Object({}),
    output: t.Object({
      servers: t.Array(ServerSchema),
      unrecognised: t.Array(t.Object({ host: t.String(), port: t.Integer() }), { description: 'Ports where something answered HTTP that is not an AI server Parley recognises' }),
      ports: t.Array(t.Integer(), { description: 'The ports probed' }),
      tookMs: t.Integer(),
    }),
    errors: [403],
    handler: ({ deps }) => discoverServers({ extraPorts: deps.config.discoverPorts, skipPorts: deps.config.port ? [deps.config.port] : [] }),
  }),
];
