import type { CallToolResult, ElicitRequest, ElicitResult, Tool } from '@modelcontextprotocol/client';
import type { Config } from '../config';
import type { McpServerRow } from '../db/schema';
import type { Store } from '../db/work';
import type { Sealer } from '../connections/seal';
import type { Logger } from '../log';
import { connectMcp, type Connected } from './mcp-connect';
import { createPool, type Pool, type PoolEntry } from './mcp-pool';
import { createBreaker, type Breaker } from './mcp-breaker';
import { createMcpTokens, type McpTokens } from './mcp-tokens';
import { McpError, mcpErrorOf } from './mcp-errors';
import { mcpFetch } from './mcp-fetch';
import { readMcpSettings } from './mcp-settings';
import { listUsableMcpServers } from './mcp-server.store';
import type { SessionOptions } from './mcp-oauth-session';

/**
 * Parley's MCP client (docs/mcp.md), `deps.mcp`: the connections per (server, user), the circuit
 * breaker per server, users' OAuth sessions, and the three things the rest of Parley asks of it:
 * the tools a user may call now, a call, and a test.
 */
export interface Mcp {
  readonly tokens: McpTokens;
  readonly pool: Pool;
  readonly breaker: Breaker;
  /** The servers this user may use and their tools; a server that fails or waits for a sign-in is left out (with why, for the log). */
  toolsFor(userId: string, opts?: { serverIds?: readonly string[] }): Promise<{ server: McpServerRow; tools: Tool[] }[]>;
  call(server: McpServerRow, userId: string, tool: string, args: Record<string, unknown>, opts?: { signal?: AbortSignal }): Promise<CallToolResult>;
  /** Reach the server now as `userId`: its protocol, transport, tools, or the problem in words. */
  test(server: McpServerRow, userId: string): Promise<McpTestResult>;
  /** What the last contact with a server said (the admin pages). */
  health(serverId: string): McpHealth | undefined;
  /** A server's row changed or went: its connections close. */
  changed(serverId: string): Promise<void>;
  close(): Promise<void>;
}

export interface McpHealth {
  ok: boolean;
  error?: string;
  checkedAt: number;
  protocolVersion?: string;
  via?: string;
  tools?: number;
}

export interface McpTestResult {
  ok: boolean;
  latencyMs: number;
  error: string | null;
  needsSignIn: boolean;
  protocolVersion: string | null;
  transport: string | null;
  serverInfo: { name: string; version: string } | null;
  tools: { name: string; description: string }[];
}

interface Secrets {
  headers?: Record<string, string>;
  env?: Record<string, string>;
}

export interface McpDeps {
  config: Config;
  store: Store;
  sealer: Sealer;
  log: Logger;
  now: () => number;
  instanceId: string;
  /** Answers a server's form elicitation (`parley mcp check` only). */
  elicit?: (request: ElicitRequest['params']) => Promise<ElicitResult>;
}

/** OAuth metadata and token answers are small. */
const OAUTH_MAX_BYTES = 1024 * 1024;

export function createMcp(deps: McpDeps): Mcp {
  const { config, log } = deps;
  const pool = createPool({ idleMs: config.mcpIdleS * 1000, max: config.mcpMaxConnections, now: deps.now, onError: (err) => log.warn('mcp close failed', { cause: String(err) }) });
  const breaker = createBreaker({ failures: config.mcpBreakerFailures, openMs: config.mcpBreakerOpenS * 1000, now: deps.now });
  const healths = new Map<string, McpHealth>();
  // What each server version negotiated: a stdio server is probed with a second process only once.
  const eras = new Map<string, 'modern' | 'legacy'>();
  const secretsCache = new Map<string, { version: number; secrets: Secrets }>();

  const secretsOf = async (server: McpServerRow): Promise<Secrets> => {
    if (!server.secrets) return {};
    const cached = secretsCache.get(server.id);
    if (cached?.version === server.version) return cached.secrets;
    const secrets = JSON.parse(await deps.sealer.open(server.secrets)) as Secrets;
    secretsCache.set(server.id, { version: server.version, secrets });
    return secrets;
  };

  const guardOf = async (server: McpServerRow) => {
    if (!server.ownerId) return undefined;
    const settings = await readMcpSettings(deps.store);
    return { allowPrivate: settings.userServersAllowPrivate, allowHosts: config.fetchAllowHosts };
  };

  const callbackUrl = () => `${config.publicUrl ?? `http://${config.host}:${config.port}`}/api/mcp/oauth/callback`;
  const sessionOptions = async (server: McpServerRow): Promise<SessionOptions> => {
    const secret = server.oauthClientId && server.oauthClient ? await deps.sealer.open(server.oauthClient) : undefined;
    const publicUrl = config.publicUrl;
    return {
      redirectUrl: callbackUrl(),
      // A client ID metadata document needs an https address the authorization server can fetch.
      ...(publicUrl?.startsWith('https://') ? { clientMetadataUrl: `${publicUrl}/api/mcp/oauth/client-metadata.json` } : {}),
      ...(server.oauthClientId ? { preregistered: { client_id: server.oauthClientId, ...(secret ? { client_secret: secret } : {}) } } : {}),
    };
  };

  const tokens = createMcpTokens({
    store: deps.store,
    sealer: deps.sealer,
    log,
    now: deps.now,
    instanceId: deps.instanceId,
    refreshEarlyMs: config.mcpRefreshEarlyS * 1000,
    session: sessionOptions,
    // The OAuth requests of a user's server are held to the same reach as its MCP requests.
    fetchFor: (server) => async (url, init) => mcpFetch({ maxBytes: OAUTH_MAX_BYTES, serverName: server.name, guard: await guardOf(server) })(url, init),
  });

  /** The user's token on every request; after a 401, a refresh (unless the token sent is already replaced). */
  const bearerOf = (server: McpServerRow, userId: string) => {
    let sent: string | undefined;
    return {
      token: async () => (sent = await tokens.access(server, userId)),
      onUnauthorized: () => tokens.refreshAfter401(server, userId, sent),
    };
  };

  async function connect(server: McpServerRow, userId: string): Promise<Connected> {
    const secrets = await secretsOf(server);
    if (server.auth === 'oauth' && !(await tokens.access(server, userId)))
      throw new McpError(`The MCP server ${server.name} asks you to sign in first: connect it in Settings → MCP servers.`, 'sign_in');
    const eraKey = `${server.id}:${server.version}`;
    const conn = await connectMcp(
      { name: server.name, transport: server.transport, url: server.url, command: server.command, headers: secrets.headers, env: secrets.env },
      {
        timeoutMs: config.mcpConnectTimeoutS * 1000,
        maxBytes: config.mcpResultMaxBytes,
        guard: await guardOf(server),
        era: eras.get(eraKey),
        elicit: deps.elicit,
        auth: server.auth === 'oauth' ? bearerOf(server, userId) : undefined,
        onStderr: (line) => log.info('mcp server stderr', { server: server.name, line }),
        onListChanged: () => pool.drop(server.id, userId),
      },
    );
    eras.set(eraKey, conn.era);
    return conn;
  }

  /** Runs `fn` on the (server, user) connection, through the breaker; failures are McpErrors with words. */
  async function using<T>(server: McpServerRow, userId: string, fn: (entry: PoolEntry) => Promise<T>): Promise<T> {
    breaker.check(server.id, server.name);
    try {
      const result = await pool.use({ serverId: server.id, userId, version: server.version }, () => connect(server, userId), async (entry) => {
        try {
          return await fn(entry);
        } catch (raw) {
          throw mcpErrorOf(raw, server.name, entry.conn.lastError);
        }
      });
      breaker.success(server.id);
      return result;
    } catch (raw) {
      const err = mcpErrorOf(raw, server.name);
      breaker.failure(server.id, err);
      // A connection that broke, or a session the server forgot (HTTP 404): the next use starts afresh.
      if (err.kind !== 'sign_in' && err.kind !== 'breaker') pool.drop(server.id, userId);
      healths.set(server.id, { ok: false, error: err.message, checkedAt: deps.now() });
      throw err;
    }
  }

  const listTools = (server: McpServerRow, userId: string) =>
    using(server, userId, async (entry) => {
      if (!entry.tools) {
        const listed = await entry.conn.client.listTools(undefined, { timeout: config.mcpConnectTimeoutS * 1000 });
        entry.tools = listed.tools;
        healths.set(server.id, { ok: true, checkedAt: deps.now(), protocolVersion: entry.conn.client.getNegotiatedProtocolVersion(), via: entry.conn.via, tools: listed.tools.length });
      }
      return entry.tools;
    });

  return {
    tokens,
    pool,
    breaker,
    async toolsFor(userId, opts) {
      let servers = await deps.store.read((tx) => listUsableMcpServers(tx, userId));
      if (opts?.serverIds) servers = servers.filter((s) => opts.serverIds!.includes(s.id));
      const listed = await Promise.all(
        servers.map(async (server) => {
          try {
            return { server, tools: await listTools(server, userId) };
          } catch (err) {
            const e = err as McpError;
            log.warn('mcp server left out of the turn', { server: server.name, userId, reason: e.kind, error: e.message, ...(e.detail ? { detail: e.detail } : {}) });
            return undefined;
          }
        }),
      );
      return listed.filter((x): x is { server: McpServerRow; tools: Tool[] } => !!x);
    },
    call(server, userId, tool, args, opts) {
      const timeout = (server.timeoutS ?? config.mcpCallTimeoutS) * 1000;
      return using(server, userId, async (entry) => {
        const known = entry.tools?.find((t) => t.name === tool);
        return (await entry.conn.client.callTool(
          { name: tool, arguments: args },
          { timeout, resetTimeoutOnProgress: true, maxTotalTimeout: config.mcpCallMaxS * 1000, signal: opts?.signal, ...(known ? { toolDefinition: known } : {}), onprogress: () => undefined },
        )) as CallToolResult;
      });
    },
    async test(server, userId) {
      const started = performance.now();
      const base = { needsSignIn: false, protocolVersion: null, transport: null, serverInfo: null, tools: [] };
      try {
        // A fresh connection: a test says how the server is now, not how it was.
        await pool.closeServer(server.id, userId);
        const tools = await listTools(server, userId);
        const info = await using(server, userId, async (entry) => ({
          version: entry.conn.client.getNegotiatedProtocolVersion() ?? null,
          via: entry.conn.via,
          server: entry.conn.client.getServerVersion(),
        }));
        return {
          ...base,
          ok: true,
          latencyMs: Math.round(performance.now() - started),
          error: null,
          protocolVersion: info.version,
          transport: info.via,
          serverInfo: info.server ? { name: info.server.name, version: info.server.version } : null,
          tools: tools.map((t) => ({ name: t.name, description: (t.description ?? '').slice(0, 500) })),
        };
      } catch (err) {
        const e = mcpErrorOf(err, server.name);
        return { ...base, ok: false, latencyMs: Math.round(performance.now() - started), error: e.message, needsSignIn: e.kind === 'sign_in' };
      }
    },
    health: (serverId) => healths.get(serverId),
    async changed(serverId) {
      secretsCache.delete(serverId);
      healths.delete(serverId);
      breaker.success(serverId);
      await pool.closeServer(serverId);
    },
    close: () => pool.closeAll(),
  };
}
