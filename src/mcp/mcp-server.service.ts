import { isIP } from 'node:net';
import type { McpServerRow } from '../db/schema';
import type { AppDeps } from '../deps';
import type { Sealer } from '../connections/seal';
import { checkCap } from '../http/user-caps';
import { isoOrNull } from '../ids';
import { maskUrl } from '../mask-secrets';
import { resolveChecked, SafeFetchError } from '../net/safe-fetch';
import { serializeOn } from '../db/work';
import { countUserMcpServers, deleteMcpServer, findMcpServerByRef, insertMcpServer, listMcpServerRows, mcpNameTaken, updateMcpServerRow, type McpServerChange } from './mcp-server.store';
import { readMcpSettings } from './mcp-settings';

/**
 * The rules of MCP servers, shared by the operations and `parley mcp` (STYLE.md §12): what a
 * name, address, command and headers may be, who may add what, sealing, and the views that never
 * carry a secret. A stdio server runs a program on this machine, so only the CLI (the admin at
 * the server's shell) adds one or sets its command; the API, even an admin's, takes remote ones.
 */
export class McpRefusal extends Error {
  constructor(
    message: string,
    readonly status: 400 | 403 | 404 | 409 = 400,
  ) {
    super(message);
  }
}

export interface McpServerInput {
  name: string;
  transport?: 'http' | 'stdio';
  url?: string;
  command?: string[];
  headers?: Record<string, string>;
  env?: Record<string, string>;
  auth?: 'none' | 'oauth';
  oauthClientId?: string | null;
  oauthClientSecret?: string | null;
  approval?: 'never' | 'ask';
  timeoutS?: number | null;
  enabled?: boolean;
}

export type McpServerUpdate = Partial<Omit<McpServerInput, 'transport' | 'headers' | 'env'>> & { headers?: Record<string, string> | null; env?: Record<string, string> | null };

/** Who asks: the admin's CLI (may run commands), an admin through the API, or a user for their own servers. */
export type McpActor = { kind: 'cli' } | { kind: 'admin' } | { kind: 'user'; userId: string };

const NAME = /^[a-z0-9][a-z0-9-]{0,29}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;
/** Headers the transport sets itself. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'connection', 'transfer-encoding']);

/** What the rules need: the server's deps, or the CLI's (which has no app). */
export type McpServiceDeps = Pick<AppDeps, 'store' | 'config' | 'now' | 'mcp'> & { connections: { sealer: Sealer } };

const ownerOf = (actor: McpActor) => (actor.kind === 'user' ? actor.userId : null);

function checkName(name: string): string {
  if (!NAME.test(name)) throw new McpRefusal(`The name "${name}" is not usable: 1 to 30 lowercase letters, digits and hyphens, starting with a letter or digit (it is part of the tools' names).`);
  return name;
}

function checkUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new McpRefusal("The server's address is not an absolute URL (e.g. https://mcp.example.com/mcp).");
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new McpRefusal("The server's address must be an http or https URL.");
  if (url.username || url.password) throw new McpRefusal("The server's address carries a user name or password: put the credential in a header, where it is sealed.");
  return url.href;
}

function checkCommand(command: string[] | undefined): string[] {
  if (!command?.length || !command[0]?.trim()) throw new McpRefusal('A stdio server needs a command: the program and its arguments.');
  if (command.length > 100 || command.some((a) => a.length > 4096 || a.includes('\u0000'))) throw new McpRefusal('The command is too long, or holds a NUL character.');
  return command;
}

function checkPairs(pairs: Record<string, string>, what: 'header' | 'environment variable'): Record<string, string> {
  const entries = Object.entries(pairs);
  if (entries.length > 50) throw new McpRefusal(`At most 50 ${what}s.`);
  for (const [k, v] of entries) {
    if (!(what === 'header' ? HEADER_NAME : ENV_NAME).test(k)) throw new McpRefusal(`"${k}" is not a ${what} name.`);
    if (what === 'header' && RESERVED_HEADERS.has(k.toLowerCase())) throw new McpRefusal(`The ${k} header is set by Parley itself.`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    if (/[\u0000-\u001f\u007f]/.test(v) || v.length > 8192) throw new McpRefusal(`The ${what} ${k} holds a line break or control character, or is too long: paste it again.`);
  }
  return pairs;
}

/** A user's server must be reachable without entering this machine or its LAN (unless the admin allows it): checked now, and again on every request. */
async function checkReach(deps: McpServiceDeps, url: string): Promise<void> {
  const settings = await readMcpSettings(deps.store);
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  try {
    await resolveChecked(host, { allowPrivate: settings.userServersAllowPrivate, allowHosts: deps.config.fetchAllowHosts });
  } catch (err) {
    if (err instanceof SafeFetchError && err.reason === 'PRIVATE_ADDRESS')
      throw new McpRefusal(`${host} is ${isIP(host) ? 'a private or local address' : 'on a private or local address'}; this server does not let users add MCP servers there.`);
    if (err instanceof SafeFetchError && err.reason === 'DNS') throw new McpRefusal(`${host} does not resolve: check the address.`);
    throw err;
  }
}

async function sealSecrets(deps: McpServiceDeps, secrets: { headers?: Record<string, string> | null; env?: Record<string, string> | null }): Promise<string | null> {
  const kept = Object.fromEntries(Object.entries(secrets).filter(([, v]) => v && Object.keys(v).length));
  return Object.keys(kept).length ? deps.connections.sealer.seal(JSON.stringify(kept)) : null;
}

async function mayUseOwnServers(deps: McpServiceDeps): Promise<void> {
  if (!(await readMcpSettings(deps.store)).userServers) throw new McpRefusal("This server's admin does not let users add their own MCP servers.", 403);
}

export async function addMcpServer(deps: McpServiceDeps, actor: McpActor, input: McpServerInput): Promise<McpServerRow> {
  const name = checkName(input.name);
  const transport = input.transport ?? 'http';
  if (transport === 'stdio' && actor.kind !== 'cli')
    throw new McpRefusal('A stdio server runs a program on this machine: its admin adds it with `parley mcp add NAME --command ...` on the server itself.');
  if (actor.kind === 'user') await mayUseOwnServers(deps);
  if (input.env && transport !== 'stdio') throw new McpRefusal('Environment variables are for stdio servers; a remote server takes headers.');
  const url = transport === 'http' ? checkUrl(input.url ?? '') : null;
  const command = transport === 'stdio' ? checkCommand(input.command) : null;
  if (actor.kind === 'user' && url) await checkReach(deps, url);
  const secrets = await sealSecrets(deps, { headers: input.headers && checkPairs(input.headers, 'header'), env: input.env && checkPairs(input.env, 'environment variable') });
  const oauthClient = input.oauthClientSecret ? await deps.connections.sealer.seal(input.oauthClientSecret) : null;
  const ownerId = ownerOf(actor);
  const now = deps.now();
  return deps.store.write(function* (tx) {
    // Names a user sees must not meet twice; users' servers are capped per user.
    if (tx.dialect === 'pg') yield* serializeOn(tx, `mcp-servers:${ownerId ?? 'admin'}`);
    if (yield* mcpNameTaken(tx, name, ownerId)) throw new McpRefusal(`An MCP server named ${name} exists already${ownerId ? ' (yours, or one the admin offers)' : ''}.`, 409);
    if (ownerId)
      yield* checkCap(tx, 'mcpMaxServersPerUser', ownerId, deps.config.mcpMaxServersPerUser, countUserMcpServers(tx, ownerId), (n) => [
        `You have ${n} MCP servers`,
        'remove one first',
      ]);
    return yield* insertMcpServer(
      tx,
      {
        ownerId,
        name,
        transport,
        url,
        command,
        secrets,
        auth: input.auth ?? 'none',
        oauthClientId: input.oauthClientId ?? null,
        oauthClient,
        approval: input.approval ?? 'never',
        timeoutS: input.timeoutS ?? null,
        enabled: input.enabled ?? true,
      },
      now,
    );
  });
}

export async function findOwnMcpServer(deps: McpServiceDeps, actor: McpActor, ref: string): Promise<McpServerRow> {
  const row = await deps.store.read((tx) => findMcpServerByRef(tx, ref, ownerOf(actor)));
  if (!row) throw new McpRefusal(`No MCP server ${ref}.`, 404);
  return row;
}

export async function updateMcpServer(deps: McpServiceDeps, actor: McpActor, ref: string, input: McpServerUpdate): Promise<McpServerRow> {
  const current = await findOwnMcpServer(deps, actor, ref);
  if (actor.kind === 'user') await mayUseOwnServers(deps);
  if (input.command !== undefined && (actor.kind !== 'cli' || current.transport !== 'stdio'))
    throw new McpRefusal(current.transport === 'stdio' ? "A stdio server's command is set with `parley mcp set NAME --command ...` on the server itself." : 'A remote server has no command.');
  if (input.url !== undefined && current.transport !== 'http') throw new McpRefusal('A stdio server has no URL.');
  if (input.env !== undefined && (actor.kind !== 'cli' || current.transport !== 'stdio')) throw new McpRefusal("A stdio server's environment is set with `parley mcp set` on the server itself.");
  const change: McpServerChange = {};
  if (input.name !== undefined && input.name !== current.name) change.name = checkName(input.name);
  if (input.url !== undefined) {
    change.url = checkUrl(input.url);
    if (actor.kind === 'user') await checkReach(deps, change.url);
  }
  if (input.command !== undefined) change.command = checkCommand(input.command);
  if (input.headers !== undefined || input.env !== undefined) {
    const old = current.secrets ? (JSON.parse(await deps.connections.sealer.open(current.secrets)) as { headers?: Record<string, string>; env?: Record<string, string> }) : {};
    change.secrets = await sealSecrets(deps, {
      headers: input.headers === undefined ? old.headers : input.headers && checkPairs(input.headers, 'header'),
      env: input.env === undefined ? old.env : input.env && checkPairs(input.env, 'environment variable'),
    });
  }
  if (input.auth !== undefined) change.auth = input.auth;
  if (input.oauthClientId !== undefined) change.oauthClientId = input.oauthClientId || null;
  if (input.oauthClientSecret !== undefined) change.oauthClient = input.oauthClientSecret ? await deps.connections.sealer.seal(input.oauthClientSecret) : null;
  if (input.approval !== undefined) change.approval = input.approval;
  if (input.timeoutS !== undefined) change.timeoutS = input.timeoutS;
  if (input.enabled !== undefined) change.enabled = input.enabled;
  const ownerId = current.ownerId;
  const row = await deps.store.write(function* (tx) {
    if (change.name && (yield* mcpNameTaken(tx, change.name, ownerId, current.id))) throw new McpRefusal(`An MCP server named ${change.name} exists already.`, 409);
    return yield* updateMcpServerRow(tx, current.id, change, deps.now());
  });
  if (!row) throw new McpRefusal(`No MCP server ${ref}.`, 404);
  await deps.mcp.changed(row.id);
  return row;
}

/** Its users' sessions go with it; turns already calling it finish their call. */
export async function removeMcpServer(deps: McpServiceDeps, actor: McpActor, ref: string): Promise<McpServerRow> {
  const row = await findOwnMcpServer(deps, actor, ref);
  await deps.store.write((tx) => deleteMcpServer(tx, row.id));
  await deps.mcp.changed(row.id);
  return row;
}

export const listMcpServers = (deps: McpServiceDeps, actor: McpActor) => deps.store.read((tx) => listMcpServerRows(tx, ownerOf(actor)));

/** What an admin, or the user who owns it, is shown of a server: never a secret's value. */
export async function mcpServerView(deps: McpServiceDeps, row: McpServerRow, opts: { admin: boolean }) {
  const secrets = row.secrets ? (JSON.parse(await deps.connections.sealer.open(row.secrets)) as { headers?: Record<string, string>; env?: Record<string, string> }) : {};
  const health = deps.mcp.health(row.id);
  const breaker = deps.mcp.breaker.state(row.id);
  return {
    id: row.id,
    name: row.name,
    transport: row.transport,
    url: row.url ? maskUrl(row.url) : null,
    // The admin's own configuration; a user never sees an admin's command.
    command: opts.admin ? row.command : null,
    headerNames: Object.keys(secrets.headers ?? {}),
    envNames: opts.admin ? Object.keys(secrets.env ?? {}) : [],
    auth: row.auth,
    oauthClientId: row.oauthClientId,
    hasOauthClientSecret: !!(row.oauthClientId && row.oauthClient),
    approval: row.approval,
    timeoutS: row.timeoutS,
    enabled: row.enabled,
    shared: row.ownerId === null,
    createdAt: isoOrNull(row.createdAt)!,
    updatedAt: isoOrNull(row.updatedAt)!,
    health: health
      ? { ok: health.ok, error: health.error ?? null, protocolVersion: health.protocolVersion ?? null, transport: health.via ?? null, tools: health.tools ?? null, checkedAt: isoOrNull(health.checkedAt)! }
      : null,
    breakerOpenUntil: isoOrNull(breaker.openUntil),
  };
}
