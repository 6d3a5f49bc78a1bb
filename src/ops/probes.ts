import { settingList, type Config } from '../config';
import type { Check } from './checks';
import { probeCapabilities, probeContextWindow, type CapabilityTarget } from './probe-capabilities';
import type { CapabilitySetting } from '../ai/capabilities';
import { probeVoice } from '../voice/voice-check';

/**
 * The value of the setting read from `env`, or undefined when this build has no such row.
 * Looked up by environment variable name, the names users write in their configuration.
 */
export function settingByEnv(config: Config, env: string): unknown {
  const key = Object.keys(settingList).find((k) => settingList[k]!.env === env);
  return key === undefined ? undefined : (config as Record<string, unknown>)[key];
}

const TIMEOUT_MS = 4000;

async function get(url: string, headers: Record<string, string> = {}): Promise<Response | Error> {
  try {
    return await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'manual' });
  } catch (err) {
    return err as Error;
  }
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** An empty PARLEY_AI_BASE_URL means OpenAI's API, as in the openai SDK. */
export const aiModelsUrl = (baseUrl: string | undefined) => `${trimSlash(baseUrl || 'https://api.openai.com/v1')}/models`;

export interface AiTarget {
  provider?: string;
  baseUrl?: string;
  apiKey?: string;
  models: string[];
}

/** GET <base>/models: OpenAI, Ollama (/v1) and llama.cpp's server all answer it with `{data:[{id}]}`. */
export async function probeAi(t: AiTarget): Promise<Check> {
  const name = 'AI provider';
  if (t.provider === undefined) return { name, status: 'skip', detail: 'this build has no AI provider settings' };
  if (t.provider === 'none') return { name, status: 'skip', detail: 'PARLEY_AI_PROVIDER=none (chat and research are off)' };
  const url = aiModelsUrl(t.baseUrl);
  const res = await get(url, t.apiKey ? { authorization: `Bearer ${t.apiKey}` } : {});
  if (res instanceof Error)
    return { name, status: 'fail', detail: `${url}: ${res.message}`, fix: 'start the model server, or fix PARLEY_AI_BASE_URL (it usually ends in /v1)' };
  if (res.status === 401 || res.status === 403)
    return { name, status: 'fail', detail: `${url} refused the key (HTTP ${res.status})`, fix: 'set a valid PARLEY_AI_API_KEY' };
  if (!res.ok) return { name, status: 'warn', detail: `${url} answered HTTP ${res.status}`, fix: 'check PARLEY_AI_BASE_URL: it should be the API root that serves /models' };
  const list = ((await res.json().catch(() => undefined)) as { data?: { id?: string }[] } | undefined)?.data;
  // A page that is not a model list (a proxy's, a login form): the base URL points elsewhere.
  if (!Array.isArray(list))
    return { name, status: 'warn', detail: `${url} answered, but not with an OpenAI-style model list`, fix: 'check PARLEY_AI_BASE_URL: it should be the API root that serves /models' };
  const ids = list.map((m) => m.id);
  // Reachable but serving nothing (an Ollama with no model pulled): every turn would fail.
  if (!ids.length)
    return { name, status: 'warn', detail: `${url} is reachable but lists no models`, fix: `pull or load a model (e.g. \`ollama pull\`), then set PARLEY_AI_MODEL to it` };
  const missing = t.models.filter((m) => m && !ids.includes(m));
  if (missing.length)
    return { name, status: 'warn', detail: `${url} is reachable but does not list ${missing.join(', ')}`, fix: `pull or load the model, or set PARLEY_AI_MODEL to one of: ${ids.slice(0, 8).join(', ')}` };
  return { name, status: 'ok', detail: `${url} reachable (${ids.length} model${ids.length === 1 ? '' : 's'})` };
}

/** SearxNG answers JSON only when `json` is among `search.formats` in its settings.yml; 403 otherwise. */
export async function probeSearxng(provider: string | undefined, baseUrl: string | undefined): Promise<Check> {
  const name = 'web search';
  if (provider === undefined) return { name, status: 'skip', detail: 'this build has no search settings' };
  if (provider !== 'searxng') return { name, status: 'skip', detail: `PARLEY_SEARCH_PROVIDER=${provider}` };
  if (!baseUrl) return { name, status: 'fail', detail: 'PARLEY_SEARCH_PROVIDER=searxng but PARLEY_SEARXNG_URL is empty', fix: 'set PARLEY_SEARXNG_URL (docs/searxng.md)' };
  const url = `${trimSlash(baseUrl)}/search?q=parley&format=json`;
  const res = await get(url);
  if (res instanceof Error) return { name, status: 'fail', detail: `${url}: ${res.message}`, fix: 'start SearxNG, or fix PARLEY_SEARXNG_URL' };
  if (res.status === 403)
    return { name, status: 'fail', detail: `${url} refused format=json (HTTP 403)`, fix: 'add `json` to `search.formats` in SearxNG settings.yml and restart it (docs/searxng.md)' };
  if (!res.ok) return { name, status: 'warn', detail: `${url} answered HTTP ${res.status}`, fix: 'check PARLEY_SEARXNG_URL' };
  const body = (await res.json().catch(() => undefined)) as { results?: unknown[] } | undefined;
  if (!Array.isArray(body?.results)) return { name, status: 'fail', detail: `${url} did not answer SearxNG JSON`, fix: 'check PARLEY_SEARXNG_URL points at SearxNG itself' };
  return { name, status: 'ok', detail: `${url} reachable (${body.results.length} results)` };
}

/** The environment's chat model: does it take tools and images, and its context window. */
function envTarget(config: Config): CapabilityTarget {
  const str = (env: string) => settingByEnv(config, env) as string | undefined;
  return {
    provider: str('PARLEY_AI_PROVIDER'),
    baseUrl: str('PARLEY_AI_BASE_URL'),
    apiKey: str('PARLEY_AI_API_KEY'),
    model: str('PARLEY_AI_MODEL'),
    settings: { tools: str('PARLEY_AI_TOOLS') as CapabilitySetting | undefined, images: str('PARLEY_AI_VISION') as CapabilitySetting | undefined },
    contextTokens: Number(settingByEnv(config, 'PARLEY_AI_CONTEXT_TOKENS') ?? 0),
    answerTokens: Number(settingByEnv(config, 'PARLEY_AI_ANSWER_TOKENS') ?? 0),
  };
}

export async function probeModelFit(config: Config): Promise<Check[]> {
  const target = envTarget(config);
  return Promise.all([probeCapabilities(target), probeContextWindow(target)]);
}

/** Probe every provider configured in `config` (doctor without the database). */
export async function probeProviders(config: Config): Promise<Check[]> {
  const str = (env: string) => settingByEnv(config, env) as string | undefined;
  const models = [str('PARLEY_AI_MODEL'), str('PARLEY_RESEARCH_MODEL')].filter((m): m is string => !!m);
  const target = envTarget(config);
  return Promise.all([
    probeAi({ provider: str('PARLEY_AI_PROVIDER'), baseUrl: str('PARLEY_AI_BASE_URL'), apiKey: str('PARLEY_AI_API_KEY'), models }),
    probeSearxng(str('PARLEY_SEARCH_PROVIDER'), str('PARLEY_SEARXNG_URL')),
    probeCapabilities(target),
    probeContextWindow(target),
    probeVoice(config, 'stt'),
    probeVoice(config, 'tts'),
  ]);
}
