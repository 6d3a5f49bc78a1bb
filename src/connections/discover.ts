/**
 * "Look for servers on this machine": the AI servers that answer on loopback (127.0.0.1 and ::1)
 * at their usual ports, or at the ports PARLEY_DISCOVER_PORTS adds, each identified by what it
 * answers and offered as the connections it would make (docs/ai-providers.md, "Finding servers
 * on this machine"). Nothing but this machine is ever probed, only with GETs, without
 * credentials, not following redirects; each request has ~500 ms and the whole probe ~1.5 s,
 * so a port that never answers costs no more than that.
 */

export type ServerKind = 'ollama' | 'llama.cpp' | 'lm-studio' | 'vllm' | 'localai' | 'speaches' | 'kokoro' | 'openai-compatible';
export type OfferKind = 'chat' | 'embeddings' | 'images' | 'stt' | 'tts';

/** A connection a found server would make: what `parley connection add` / `admin/addConnection` take. */
export interface OfferedConnection {
  /** A suggested connection name (lowercase, `[a-z0-9-]`). */
  name: string;
  kind: OfferKind;
  /** Chat Completions for chat; the OpenAI-shaped endpoints (`/embeddings`, `/audio/…`, `/images/…`) otherwise. */
  api: 'openai-chat' | 'openai';
  /** The API root with its version prefix, as every connection's base URL is. */
  baseUrl: string;
  models: string[];
  /** Text to speech: the voices the server lists. */
  voices?: string[];
  /** The command that adds it (`addConnectionCommand`). */
  addCommand: string;
}

export interface FoundServer {
  server: ServerKind;
  label: string;
  version: string | null;
  host: string;
  port: number;
  connections: OfferedConnection[];
}

export interface Discovery {
  servers: FoundServer[];
  /** Ports where something answered HTTP that is not an AI server Parley recognises. */
  unrecognised: { host: string; port: number }[];
  ports: number[];
  tookMs: number;
}

/** The usual ports: Ollama, llama.cpp and LocalAI, LM Studio, vLLM and Speaches, Kokoro-FastAPI. */
export const USUAL_PORTS = [11434, 8080, 1234, 8000, 8880] as const;
export const LOOPBACK = ['127.0.0.1', '::1'] as const;

const LABELS: Record<ServerKind, string> = {
  ollama: 'Ollama',
  'llama.cpp': 'llama.cpp server',
  'lm-studio': 'LM Studio',
  vllm: 'vLLM',
  localai: 'LocalAI',
  speaches: 'Speaches',
  kokoro: 'Kokoro-FastAPI',
  'openai-compatible': 'OpenAI-compatible server',
};
const SLUGS: Record<ServerKind, string> = { ollama: 'ollama', 'llama.cpp': 'llama-cpp', 'lm-studio': 'lm-studio', vllm: 'vllm', localai: 'localai', speaches: 'speaches', kokoro: 'kokoro', 'openai-compatible': 'local' };
const HOME_PORT: Partial<Record<ServerKind, number>> = { ollama: 11434, 'llama.cpp': 8080, localai: 8080, 'lm-studio': 1234, vllm: 8000, speaches: 8000, kokoro: 8880 };

/** Asked of whatever answers `/v1/models` (or anything at all) at a port, all at once. */
const PATHS = ['/api/version', '/api/tags', '/props', '/version', '/api/v0/models', '/v1/audio/voices', '/.well-known/localai.json'] as const;
const MAX_BODY_BYTES = 512 * 1024;

interface Answer {
  status: number;
  server: string;
  json: any;
}
type Answers = Partial<Record<'/v1/models' | (typeof PATHS)[number], Answer>>;

/** A GET's answer (its JSON when it has some), or undefined when nothing answered in time. */
async function get(url: string, perRequestMs: number, overall: AbortSignal): Promise<Answer | undefined> {
  try {
    const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.any([overall, AbortSignal.timeout(perRequestMs)]) });
    const text = await readCapped(res);
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, server: res.headers.get('server') ?? '', json };
  } catch {
    return undefined;
  }
}

/** The body as text, or '' past MAX_BODY_BYTES: a model list is small, and a probe must not hold megabytes. */
async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = Number(res.headers.get('content-length') ?? 0) > MAX_BODY_BYTES ? Infinity : 0;
  for (let r = await reader.read(); !r.done && size <= MAX_BODY_BYTES; r = await reader.read()) {
    size += r.value.byteLength;
    chunks.push(r.value);
  }
  if (size <= MAX_BODY_BYTES) return Buffer.concat(chunks).toString('utf8');
  await reader.cancel().catch(() => undefined);
  return '';
}

const ok = (a: Answer | undefined): a is Answer => a !== undefined && a.status >= 200 && a.status < 300 && a.json !== undefined && a.json !== null;
const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/** What a model's name says it is for, where the server does not say (names are all most servers give). */
export function kindByName(id: string): OfferKind {
  if (/whisper|transcri|parakeet|canary|moonshine/i.test(id)) return 'stt';
  if (/(^|[^a-z])tts|kokoro|piper|bark|orpheus|text-to-speech/i.test(id)) return 'tts';
  if (/embed|(^|[^a-z])(bge|gte|e5)-|minilm/i.test(id)) return 'embeddings';
  if (/stable-?diffusion|sdxl|(^|[^a-z])flux|dall-?e/i.test(id)) return 'images';
  return 'chat';
}

interface Identified {
  server: ServerKind;
  version: string | null;
  models: { id: string; kind: OfferKind }[];
  voices?: string[];
  /** Kinds offered even with no model listed (an Ollama with nothing pulled yet still makes a chat connection). */
  always?: OfferKind[];
}

const byName = (ids: unknown[]): Identified['models'] => ids.filter((id): id is string => typeof id === 'string' && id !== '').map((id) => ({ id, kind: kindByName(id) }));
const voicesOf = (a: Answer | undefined) => (ok(a) ? list(a.json.voices).map((v) => (typeof v === 'string' ? v : str(v?.id) ?? str(v?.name) ?? str(v?.voice_id))).filter((v): v is string => v !== null) : undefined);

/** Which server answered, from what it answered; undefined when none Parley knows. */
function identify(a: Answers): Identified | undefined {
  const data = ok(a['/v1/models']) ? list(a['/v1/models'].json.data) : [];
  const owners = new Set(data.map((m) => m?.owned_by));
  const ids = data.map((m) => m?.id);
  const tags = a['/api/tags'];
  if (ok(tags) && Array.isArray(tags.json.models) && ok(a['/api/version']) && str(a['/api/version'].json.version)) {
    const models = list(tags.json.models).map((m) => {
      const id = str(m?.name) ?? str(m?.model) ?? '';
      const families: unknown[] = [m?.details?.family, ...list(m?.details?.families)];
      return { id, kind: families.some((f) => typeof f === 'string' && /bert/i.test(f)) ? ('embeddings' as const) : kindByName(id) };
    });
    return { server: 'ollama', version: str(a['/api/version'].json.version), models: models.filter((m) => m.id), always: ['chat'] };
  }
  const props = a['/props'];
  if ((ok(props) && props.json.default_generation_settings) || /llama\.cpp/i.test(a['/v1/models']?.server ?? '') || owners.has('llamacpp')) {
    // llama-server also lists its model Ollama's way, with what it can do.
    const caps = new Map(list(a['/v1/models']?.json?.models).map((m) => [m?.model ?? m?.name, list(m?.capabilities)]));
    const models = byName(ids).map((m) => ({ id: m.id, kind: caps.get(m.id)?.includes('embedding') ? ('embeddings' as const) : ('chat' as const) }));
    return { server: 'llama.cpp', version: ok(props) ? str(props.json.build_info) : null, models, always: models.length ? [] : ['chat'] };
  }
  if (data.some((m) => m?.task === 'automatic-speech-recognition' || m?.task === 'text-to-speech')) {
    const models = data.map((m) => ({ id: String(m?.id ?? ''), kind: m?.task === 'text-to-speech' ? ('tts' as const) : m?.task === 'automatic-speech-recognition' ? ('stt' as const) : kindByName(String(m?.id ?? '')) }));
    return { server: 'speaches', version: null, models: models.filter((m) => m.id), voices: voicesOf(a['/v1/audio/voices']) };
  }
  const voices = voicesOf(a['/v1/audio/voices']);
  if (voices) return { server: 'kokoro', version: null, models: (ids.length ? byName(ids) : byName(['kokoro'])).map((m) => ({ ...m, kind: 'tts' })), voices, always: ['tts'] };
  const lmStudio = a['/api/v0/models'];
  if ((ok(lmStudio) && list(lmStudio.json.data).some((m) => typeof m?.type === 'string')) || owners.has('organization_owner')) {
    const typed = ok(lmStudio) ? list(lmStudio.json.data) : data;
    const models = typed.map((m) => ({ id: String(m?.id ?? ''), kind: m?.type === 'embeddings' ? ('embeddings' as const) : m?.type === 'llm' || m?.type === 'vlm' ? ('chat' as const) : kindByName(String(m?.id ?? '')) }));
    return { server: 'lm-studio', version: null, models: models.filter((m) => m.id) };
  }
  const version = ok(a['/version']) ? str(a['/version'].json.version) : null;
  if (owners.has('vllm')) return { server: 'vllm', version, models: byName(ids) };
  if (ok(a['/.well-known/localai.json']) || (version && ok(a['/v1/models']))) {
    return { server: 'localai', version: (ok(a['/.well-known/localai.json']) ? str(a['/.well-known/localai.json'].json.version) : null) ?? version, models: byName(ids) };
  }
  if (ok(a['/v1/models']) && Array.isArray(a['/v1/models'].json.data)) return { server: 'openai-compatible', version, models: byName(ids) };
  return undefined;
}

const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** The connections a server makes: one per kind it has models for (or always offers), chat first. */
function offersOf(found: Identified, host: string, port: number): OfferedConnection[] {
  const baseUrl = `http://${urlHost(host)}:${port}/v1`;
  const slug = SLUGS[found.server] + (HOME_PORT[found.server] === port ? '' : `-${port}`);
  const kinds: OfferKind[] = ['chat', 'embeddings', 'images', 'stt', 'tts'];
  return kinds
    .filter((kind) => found.always?.includes(kind) || found.models.some((m) => m.kind === kind))
    .map((kind) => {
      const offer = {
        name: kind === 'chat' ? slug : `${slug}-${kind}`,
        kind,
        api: kind === 'chat' ? ('openai-chat' as const) : ('openai' as const),
        baseUrl,
        models: found.models.filter((m) => m.kind === kind).map((m) => m.id),
        ...(kind === 'tts' && found.voices ? { voices: found.voices } : {}),
      };
      return { ...offer, addCommand: addConnectionCommand(offer) };
    });
}

/** Everything one address answers: `/v1/models` first, and only if anything at all answered there, the rest. */
async function probe(host: string, port: number, perRequestMs: number, overall: AbortSignal): Promise<{ answered: boolean; found?: Identified }> {
  const base = `http://${urlHost(host)}:${port}`;
  const models = await get(`${base}/v1/models`, perRequestMs, overall);
  if (!models) return { answered: false };
  const rest = await Promise.all(PATHS.map((p) => get(`${base}${p}`, perRequestMs, overall)));
  const answers: Answers = { '/v1/models': models, ...Object.fromEntries(PATHS.map((p, i) => [p, rest[i]])) };
  return { answered: true, found: identify(answers) };
}

export interface DiscoverOptions {
  /** Ports beside the usual ones (PARLEY_DISCOVER_PORTS). */
  extraPorts?: readonly number[];
  /** Ports never probed: this server's own. */
  skipPorts?: readonly number[];
  perRequestMs?: number;
  totalMs?: number;
}

/** Probe loopback; what answered, identified, in the order of the ports. */
export async function discoverServers(opts: DiscoverOptions = {}): Promise<Discovery> {
  const started = performance.now();
  const ports = [...new Set([...USUAL_PORTS, ...(opts.extraPorts ?? [])])].filter((p) => !opts.skipPorts?.includes(p));
  const overall = AbortSignal.timeout(opts.totalMs ?? 1500);
  const targets = ports.flatMap((port) => LOOPBACK.map((host) => ({ host, port })));
  const results = await Promise.all(targets.map(async (t) => ({ ...t, ...(await probe(t.host, t.port, opts.perRequestMs ?? 500, overall)) })));
  const servers: FoundServer[] = [];
  const unrecognised: Discovery['unrecognised'] = [];
  for (const port of ports) {
    // A server on both loopback addresses is one server: the IPv4 one is offered.
    const here = results.filter((r) => r.port === port && r.answered);
    const found = here.find((r) => r.found);
    if (found?.found) {
      const { server, version } = found.found;
      servers.push({ server, label: LABELS[server], version, host: found.host, port, connections: offersOf(found.found, found.host, port) });
    } else if (here.length) unrecognised.push({ host: here[0]!.host, port });
  }
  return { servers, unrecognised, ports, tookMs: Math.round(performance.now() - started) };
}

/**
 * SEAM (until the connections operations land): the command that adds an offered connection.
 * The setup page and `parley discover` show it; once `admin/addConnection` exists, the page adds
 * the connection itself from the same fields (name, kind, api, baseUrl) and this stays for the CLI.
 */
export function addConnectionCommand(c: Pick<OfferedConnection, 'name' | 'kind' | 'api' | 'baseUrl'>): string {
  return `parley connection add --name ${c.name} --kind ${c.kind} --api ${c.api} --base-url ${c.baseUrl}`;
}
