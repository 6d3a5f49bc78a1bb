import { isIP } from 'node:net';
import type { ConnectionRow } from '../db/schema';
import type { Store } from '../db/work';
import { isoOrNull } from '../ids';
import { API_OF_KIND, OPTIONS_OF_KIND, type ConnectionKind, type ConnectionOptions } from './connection-options';
import { deleteConnection, findConnection, insertConnection, listConnectionRows, updateConnectionRow, type ConnectionChange } from './connection.store';
import { lastHealth } from './connection-health';
import type { Connections } from './resolver';
import { ENV_PREFIX } from './seed-env';
import { probeConnection } from './probe-connection';
import { LIST_TIMEOUT_MS } from './model-lists';
import { NOT_CHAT } from './catalogue';
import { isPrivateAddress } from '../net/address';
import { maskUrl } from '../mask-secrets';

/**
 * The rules of connections, shared by the `admin/*` operations and `parley connection`
 * (STYLE.md §12): what a name, URL, credential and options may be, and the view that never
 * carries a credential.
 */
export class ConnectionRefusal extends Error {
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(message);
  }
}

/** Options as given: `null` (or an empty string) removes one, which then takes its default. */
export type OptionsInput = { [K in keyof ConnectionOptions]?: ConnectionOptions[K] | null };

export interface ConnectionInput {
  name: string;
  kind: ConnectionKind;
  api?: string;
  baseUrl: string;
  credential?: string;
  options?: OptionsInput;
  enabled?: boolean;
  allowPrivate?: boolean;
}

export type ConnectionUpdate = Partial<Omit<ConnectionInput, 'kind' | 'credential'>> & { credential?: string | null };

const NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;
const CREDENTIAL_MAX = 4096;

function checkName(name: string): string {
  if (!NAME.test(name)) throw new ConnectionRefusal(`The name "${name}" is not usable: 1 to 40 lowercase letters, digits and hyphens, starting with a letter or digit (it prefixes the model ids).`);
  if (name.startsWith(ENV_PREFIX)) throw new ConnectionRefusal(`Names starting with "${ENV_PREFIX}" are the environment settings' connections.`);
  return name;
}

/** An absolute http(s) URL, without user info (the credential has its own field) and trailing slashes. */
export function checkBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConnectionRefusal('The base URL is not an absolute URL (e.g. http://127.0.0.1:11434/v1).');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConnectionRefusal('The base URL must be an http or https URL.');
  if (url.username || url.password) throw new ConnectionRefusal('The base URL carries a user name or password: put the credential in its own field, where it is sealed.');
  return url.href.replace(/\/+$/, '');
}

/** A key pasted with its line break would be sent as a broken header: refused, said plainly. */
export function checkCredential(raw: string): string {
  if (/[\r\n]/.test(raw)) throw new ConnectionRefusal('The credential contains a line break: paste it again without one.');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw new ConnectionRefusal('The credential contains a control character: paste it again.');
  const key = raw.trim();
  if (!key) throw new ConnectionRefusal('The credential is empty: leave it out for a server that needs none.');
  if (key.length > CREDENTIAL_MAX) throw new ConnectionRefusal(`The credential is longer than ${CREDENTIAL_MAX} characters.`);
  return key;
}

/** With `allowPrivate: false`, a base URL whose host is `localhost` or a loopback or private IP is refused (names are not resolved). */
function checkReach(baseUrl: string, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || (isIP(host) !== 0 && isPrivateAddress(host))) throw new ConnectionRefusal('The base URL is on this machine or a private network, and this connection does not allow that (allowPrivate).');
}

function checkOptions(kind: ConnectionKind, options: OptionsInput): Record<string, unknown> {
  const allowed = OPTIONS_OF_KIND[kind];
  const given = Object.entries(options).filter(([, v]) => v !== undefined && v !== null && v !== '');
  const extra = given.map(([k]) => k).filter((k) => !allowed.includes(k as keyof ConnectionOptions));
  if (extra.length) throw new ConnectionRefusal(`A ${kind} connection has no option ${extra.join(', ')} (it takes: ${allowed.join(', ') || 'none'}).`);
  return Object.fromEntries(given);
}

function checkApi(kind: ConnectionKind, api: string | undefined): string {
  const apis = API_OF_KIND[kind];
  if (api === undefined) return apis[0]!;
  if (!apis.includes(api)) throw new ConnectionRefusal(`A ${kind} connection speaks ${apis.join(' or ')}, not ${api}.`);
  return api;
}

export async function addConnection(deps: { store: Store; connections: Connections; now: () => number }, input: ConnectionInput): Promise<ConnectionRow> {
  await deps.connections.ready();
  const name = checkName(input.name);
  const api = checkApi(input.kind, input.api);
  const baseUrl = checkBaseUrl(input.baseUrl);
  const options = checkOptions(input.kind, input.options ?? {});
  checkReach(baseUrl, input.allowPrivate ?? true);
  const key = input.credential === undefined || input.credential === '' ? undefined : checkCredential(input.credential);
  // A chat server added without a default model (a local one found on this machine): its first listed chat model.
  if (input.kind === 'chat' && !options.model) {
    const probe = await probeConnection({ api, baseUrl, kind: input.kind }, key, LIST_TIMEOUT_MS);
    const first = probe.models?.find((m) => !NOT_CHAT.test(m));
    if (first) options.model = first;
  }
  const credential = key === undefined ? null : await deps.connections.sealer.seal(key);
  const row = await deps.store.write(function* (tx) {
    if (yield* findConnection(tx, name)) throw new ConnectionRefusal(`A connection named ${name} exists already.`, 409);
    return yield* insertConnection(
      tx,
      { name, kind: input.kind, api, baseUrl, credential, options, enabled: input.enabled ?? true, source: 'admin', allowPrivate: input.allowPrivate ?? true },
      deps.now(),
    );
  });
  deps.connections.changed();
  return row;
}

export async function updateConnection(deps: { store: Store; connections: Connections; now: () => number }, idOrName: string, input: ConnectionUpdate): Promise<ConnectionRow> {
  await deps.connections.ready();
  const current = await deps.store.read((tx) => findConnection(tx, idOrName));
  if (!current) throw new ConnectionRefusal(`No connection ${idOrName}.`, 404);
  if (current.source === 'env') {
    // The environment's rows follow the environment: only whether they are used is the admin's.
    const other = Object.keys(input).filter((k) => k !== 'enabled' && (input as Record<string, unknown>)[k] !== undefined);
    if (other.length) throw new ConnectionRefusal(`${current.name} comes from the environment settings: change ${other.join(', ')} there (and restart), or disable it and add your own.`);
  }
  const change: ConnectionChange = {};
  if (input.name !== undefined && input.name !== current.name) change.name = checkName(input.name);
  if (input.api !== undefined) change.api = checkApi(current.kind, input.api);
  if (input.baseUrl !== undefined) change.baseUrl = checkBaseUrl(input.baseUrl);
  if (input.options !== undefined) change.options = checkOptions(current.kind, { ...(current.options as ConnectionOptions), ...input.options });
  if (input.enabled !== undefined) change.enabled = input.enabled;
  if (input.allowPrivate !== undefined) change.allowPrivate = input.allowPrivate;
  checkReach(change.baseUrl ?? current.baseUrl, change.allowPrivate ?? current.allowPrivate);
  if (input.credential === null || input.credential === '') change.credential = null;
  else if (input.credential !== undefined) change.credential = await deps.connections.sealer.seal(checkCredential(input.credential));
  const row = await deps.store.write(function* (tx) {
    if (change.name && (yield* findConnection(tx, change.name))) throw new ConnectionRefusal(`A connection named ${change.name} exists already.`, 409);
    return yield* updateConnectionRow(tx, current.id, change, deps.now());
  });
  if (!row) throw new ConnectionRefusal(`No connection ${idOrName}.`, 404);
  deps.connections.changed();
  return row;
}

/** A turn already running on it finishes with the adapter it has; the next one is refused. */
export async function removeConnection(deps: { store: Store; connections: Connections }, idOrName: string): Promise<ConnectionRow> {
  await deps.connections.ready();
  const row = await deps.store.write(function* (tx) {
    const found = yield* findConnection(tx, idOrName);
    if (!found) throw new ConnectionRefusal(`No connection ${idOrName}.`, 404);
    if (found.source === 'env') throw new ConnectionRefusal(`${found.name} comes from the environment settings: unset them (and restart), or disable it.`);
    yield* deleteConnection(tx, found.id);
    return found;
  });
  deps.connections.changed();
  return row;
}

/** Every row, the environment's seeded first (the server seeds at start; a test app on first use). */
export async function listConnections(deps: { store: Store; connections: Connections }): Promise<ConnectionRow[]> {
  await deps.connections.ready();
  return deps.store.read((tx) => listConnectionRows(tx));
}

/** What any caller is shown of a connection: never its credential, only whether it has one. */
export function connectionView(row: ConnectionRow, connections: Connections) {
  const health = lastHealth(connections, row);
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    api: row.api,
    // A key someone put in the URL's query (`?api_key=`) is not shown either.
    baseUrl: maskUrl(row.baseUrl),
    hasCredential: connections.hasCredential(row),
    options: row.options as Record<string, unknown>,
    enabled: row.enabled,
    source: row.source,
    allowPrivate: row.allowPrivate,
    createdAt: isoOrNull(row.createdAt)!,
    updatedAt: isoOrNull(row.updatedAt)!,
    health: health ? { reachable: health.reachable, latencyMs: health.latencyMs, error: health.error ?? null, models: health.models?.length ?? null, checkedAt: isoOrNull(health.checkedAt)! } : null,
  };
}
