import type { ConnectionRow } from '../db/schema';

/**
 * One look at a connection: is it there, how fast, which models it lists. The catalogue
 * (bounded, cached) and the health checks (`admin/testConnection`, doctor) both ask this. Errors
 * are sentences for an admin: the status and what it likely means, never the server's own text
 * (a proxy's page may echo headers) nor the credential.
 */
export interface Probe {
  reachable: boolean;
  latencyMs: number;
  /** The models it lists; undefined when it has no list (whisper.cpp, SearxNG) or could not be asked. */
  models?: string[];
  /** Why it is not usable, or not as expected; undefined when all is well. */
  error?: string;
  /** It refused the credential: reachable, but no turn will go through. */
  refused?: boolean;
}

/** The API version Anthropic's model list is asked with (the SDK sends its own with messages). */
const ANTHROPIC_VERSION = '2023-06-01';

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** Where a connection lists its models, and the headers that carry its credential. */
function listRequest(row: Pick<ConnectionRow, 'api' | 'baseUrl'>, apiKey: string | undefined): { url: string; headers: Record<string, string> } {
  const base = trimSlash(row.baseUrl);
  if (row.api === 'anthropic') return { url: `${base}/v1/models?limit=100`, headers: { 'anthropic-version': ANTHROPIC_VERSION, ...(apiKey ? { 'x-api-key': apiKey, authorization: `Bearer ${apiKey}` } : {}) } };
  if (row.api === 'searxng') return { url: `${base}/search?q=parley&format=json`, headers: { accept: 'application/json' } };
  return { url: `${base}/models`, headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} };
}

export async function probeConnection(row: Pick<ConnectionRow, 'api' | 'baseUrl' | 'kind'>, apiKey: string | undefined, timeoutMs: number): Promise<Probe> {
  const { url, headers } = listRequest(row, apiKey);
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  let res: Response;
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
  } catch (err) {
    const e = err as Error;
    const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
    return { reachable: false, latencyMs: latency(), error: timedOut ? `no answer within ${timeoutMs} ms` : `could not be reached (${codeOf(e)})` };
  }
  const body = await res.text().catch(() => '');
  const latencyMs = latency();
  if ((res.status === 401 || res.status === 403) && row.api !== 'searxng') return { reachable: true, latencyMs, refused: true, error: `refused the credential (HTTP ${res.status})` };
  if (row.api === 'searxng') {
    // SearxNG answers 403 to format=json unless its settings allow it: no search works then.
    if (res.status === 403) return { reachable: true, latencyMs, refused: true, error: 'refused format=json (HTTP 403): add `json` to search.formats in its settings.yml (docs/searxng.md)' };
    if (!res.ok || !Array.isArray(jsonOf(body)?.results)) return { reachable: true, latencyMs, error: `answered HTTP ${res.status}, not SearxNG's JSON: is this SearxNG's address?` };
    return { reachable: true, latencyMs };
  }
  // Speech servers without a model list (whisper.cpp), video servers that list none: up is enough.
  if (res.status === 404 && (row.kind === 'stt' || row.kind === 'tts' || row.kind === 'video')) return { reachable: true, latencyMs };
  if (!res.ok) return { reachable: true, latencyMs, error: `answered HTTP ${res.status} to ${new URL(url).pathname}: is this the API's base URL${row.api === 'anthropic' ? '' : ' (it usually ends in /v1)'}?` };
  const list = jsonOf(body)?.data;
  if (!Array.isArray(list)) return { reachable: true, latencyMs, error: 'answered, but not with a model list: is this the base URL of an AI server?' };
  const models = list.map((m: { id?: unknown }) => m?.id).filter((id): id is string => typeof id === 'string' && id !== '');
  return { reachable: true, latencyMs, models };
}

function jsonOf(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** "connection refused", "host not found": the system's words, without the address. */
function codeOf(e: Error & { code?: string }): string {
  if (e.code === 'ConnectionRefused' || /refused/i.test(e.message)) return 'connection refused';
  if (/ENOTFOUND|getaddrinfo|DNS|resolve/i.test(`${e.code} ${e.message}`)) return 'host not found';
  if (/certificate|TLS|SSL/i.test(e.message)) return 'TLS error';
  return e.code ?? 'network error';
}
