import type { FetchLike } from '@modelcontextprotocol/client';
import type { McpServerRow, McpTokenRow } from '../db/schema';
import type { Store } from '../db/work';
import type { Sealer } from '../connections/seal';
import type { Logger } from '../log';
import { releaseLease, tryAcquireLease } from '../tasks/lease.store';
import { deleteMcpToken, findMcpFlow, findMcpServer, findMcpToken, upsertMcpToken } from './mcp-server.store';
import { expiryOf, runAuth, type OAuthSession, type SessionOptions } from './mcp-oauth-session';
import { McpError, mcpErrorOf } from './mcp-errors';
import { isSdkError } from './mcp-sdk';

/**
 * Users' OAuth sessions with MCP servers, sealed at rest (docs/mcp.md, "Signing in").
 *
 * Refreshes happen once at a time per user and server, across instances too. LibreChat's tracker
 * shows what goes wrong otherwise: turns that all find the token expired each refresh it, and a
 * server that detects refresh-token reuse (RFC 9700) revokes the whole grant. So:
 * - **Early, with jitter**: a token is refreshed `PARLEY_MCP_REFRESH_EARLY_S` (plus up to a tenth
 *   of that, fixed per user and server) before it expires, while it still works: the turns that
 *   meet it then keep using it and do not wait.
 * - **One at a time**: in a process, one promise per (server, user); across instances, a lease
 *   (`mcp-refresh:<server>:<user>`). An instance that does not get the lease waits for the row to
 *   change, then reads the new token.
 * - **Refused refresh** (`invalid_grant`): the session is dropped, and the user is asked to
 *   connect again.
 */
export interface McpTokens {
  /** The access token to send now, or undefined when the user has not signed in (or must again). */
  access(server: McpServerRow, userId: string): Promise<string | undefined>;
  /** The server answered 401 to `failed`: refresh, unless the session holds a newer token already. */
  refreshAfter401(server: McpServerRow, userId: string, failed?: string): Promise<void>;
  /** Start a sign-in: the URL the user's browser opens. */
  start(server: McpServerRow, userId: string): Promise<string>;
  /** The callback: exchange the code for tokens. Returns the server and user it was for. */
  finish(state: string, code: string, iss?: string, expectUserId?: string): Promise<{ serverId: string; serverName: string; userId: string }>;
  disconnect(serverId: string, userId: string): Promise<void>;
  /** How many refresh requests this process sent (tests and the bench read it). */
  readonly refreshes: number;
}

const LEASE_TTL_MS = 30_000;
const FLOW_TTL_MS = 10 * 60_000;
const WAIT_STEP_MS = 50;

export interface TokenDeps {
  store: Store;
  sealer: Sealer;
  log: Logger;
  now: () => number;
  instanceId: string;
  refreshEarlyMs: number;
  /** The callback URL and client the sessions use. */
  session: (server: McpServerRow) => Promise<SessionOptions>;
  /** The fetch the OAuth requests go through (the SSRF guard for users' servers). */
  fetchFor: (server: McpServerRow) => FetchLike;
}

const sha256 = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex');

export function createMcpTokens(deps: TokenDeps): McpTokens {
  const inFlight = new Map<string, Promise<void>>();
  /** Opened sessions, by the row's `updatedAt`: a token is not decrypted for every request. */
  const opened = new Map<string, { updatedAt: number; session: OAuthSession }>();
  let refreshes = 0;
  const keyOf = (serverId: string, userId: string) => `${serverId}:${userId}`;

  /**
   * How long before expiry a token is refreshed: PARLEY_MCP_REFRESH_EARLY_S plus up to a tenth of
   * it, fixed per (server, user) so every instance plans the same moment; never more than half the
   * token's life (it was saved at `updatedAt`), or a short-lived token would be due at once, forever.
   */
  const earlyOf = (row: McpTokenRow, key: string) => {
    const jitter = (parseInt(sha256(key).slice(0, 8), 16) / 0xffffffff) * deps.refreshEarlyMs * 0.1;
    return Math.min(deps.refreshEarlyMs + jitter, (row.expiresAt! - row.updatedAt) / 2);
  };

  async function sessionOf(row: McpTokenRow): Promise<OAuthSession | undefined> {
    if (!row.tokens) return undefined;
    const key = keyOf(row.serverId, row.userId);
    const cached = opened.get(key);
    if (cached && cached.updatedAt === row.updatedAt) return cached.session;
    const session = JSON.parse(await deps.sealer.open(row.tokens)) as OAuthSession;
    opened.set(key, { updatedAt: row.updatedAt, session });
    return session;
  }

  const readRow = (serverId: string, userId: string) => deps.store.read((tx) => findMcpToken(tx, serverId, userId));

  async function saveSession(serverId: string, userId: string, session: OAuthSession): Promise<void> {
    const now = deps.now();
    const kept: OAuthSession = { tokens: session.tokens, client: session.client, discovery: session.discovery };
    const sealed = await deps.sealer.seal(JSON.stringify(kept));
    await deps.store.write((tx) => upsertMcpToken(tx, serverId, userId, { tokens: sealed, expiresAt: expiryOf(session.tokens, now), flowState: null, flow: null, flowExpiresAt: null }, now));
  }

  /** The refresh itself, on whichever instance holds the lease; others wait for its result in the row. */
  async function refreshOnce(server: McpServerRow, userId: string, seenUpdatedAt: number): Promise<void> {
    const lease = `mcp-refresh:${server.id}:${userId}`;
    const got = await deps.store.write((tx) => tryAcquireLease(tx, lease, deps.instanceId, LEASE_TTL_MS, deps.now()));
    if (!got) {
      // Another instance refreshes: wait for the row to change (or the lease to lapse).
      const until = Date.now() + LEASE_TTL_MS;
      while (Date.now() < until) {
        await Bun.sleep(WAIT_STEP_MS);
        const row = await readRow(server.id, userId);
        if (!row || row.updatedAt !== seenUpdatedAt) return;
      }
      return;
    }
    try {
      const row = await readRow(server.id, userId);
      // Refreshed meanwhile (here or elsewhere), or signed out.
      if (!row?.tokens || row.updatedAt !== seenUpdatedAt) return;
      const session = structuredClone((await sessionOf(row))!);
      if (!session.tokens?.refresh_token) {
        await deps.store.write((tx) => deleteMcpToken(tx, server.id, userId));
        return;
      }
      refreshes++;
      try {
        const opts = await deps.session(server);
        const result = await runAuth(session, { ...opts, serverUrl: server.url!, fetchFn: deps.fetchFor(server) });
        if (result !== 'AUTHORIZED') throw new Error('the refresh was refused');
        await saveSession(server.id, userId, session);
      } catch (err) {
        if (isSdkError(err, 'OAuthError')) {
          // The grant is gone (revoked, expired): the user signs in again.
          deps.log.warn('mcp token refresh refused', { server: server.name, userId, error: err.message });
          await deps.store.write((tx) => deleteMcpToken(tx, server.id, userId));
          return;
        }
        deps.log.warn('mcp token refresh failed', { server: server.name, userId, cause: err instanceof Error ? err.message : String(err) });
      }
    } finally {
      await deps.store.write((tx) => releaseLease(tx, lease, deps.instanceId));
    }
  }

  function refresh(server: McpServerRow, userId: string, seenUpdatedAt: number): Promise<void> {
    const key = keyOf(server.id, userId);
    let running = inFlight.get(key);
    if (!running) {
      running = refreshOnce(server, userId, seenUpdatedAt).finally(() => inFlight.delete(key));
      inFlight.set(key, running);
    }
    return running;
  }

  return {
    get refreshes() {
      return refreshes;
    },
    async access(server, userId) {
      let row = await readRow(server.id, userId);
      if (!row?.tokens) return undefined;
      const now = deps.now();
      if (row.expiresAt !== null && now >= row.expiresAt - earlyOf(row, keyOf(server.id, userId))) {
        const pending = refresh(server, userId, row.updatedAt);
        // Still valid: use it while the refresh runs. Expired: wait for the new one.
        if (now < row.expiresAt - 5_000) pending.catch(() => undefined);
        else {
          await pending;
          row = await readRow(server.id, userId);
          if (!row?.tokens) return undefined;
        }
      }
      return (await sessionOf(row))?.tokens?.access_token;
    },
    async refreshAfter401(server, userId, failed) {
      const row = await readRow(server.id, userId);
      if (!row?.tokens) return;
      // Refreshed meanwhile (another turn, another instance): the retry takes the new token.
      if (failed !== undefined && (await sessionOf(row))?.tokens?.access_token !== failed) return;
      await refresh(server, userId, row.updatedAt);
    },
    async start(server, userId) {
      const opts = await deps.session(server);
      const session: OAuthSession = {};
      // A registration made for an earlier sign-in is used again.
      const row = await readRow(server.id, userId);
      if (row?.tokens) session.client = (await sessionOf(row))?.client;
      try {
        const result = await runAuth(session, { ...opts, serverUrl: server.url!, fetchFn: deps.fetchFor(server), fresh: true });
        if (result !== 'REDIRECT' || !session.authorizationUrl || !session.state) throw new Error(`unexpected ${result}`);
      } catch (err) {
        throw signInError(err, server.name);
      }
      const now = deps.now();
      const flow = await deps.sealer.seal(JSON.stringify({ codeVerifier: session.codeVerifier, client: session.client, discovery: session.discovery }));
      await deps.store.write((tx) => upsertMcpToken(tx, server.id, userId, { flowState: sha256(session.state!), flow, flowExpiresAt: now + FLOW_TTL_MS }, now));
      return session.authorizationUrl;
    },
    async finish(state, code, iss, expectUserId) {
      const row = await deps.store.read((tx) => findMcpFlow(tx, sha256(state)));
      if (!row?.flow || (row.flowExpiresAt ?? 0) < deps.now()) throw new McpError('This sign-in link has expired or was used already: start again from Settings → MCP servers.', 'refused');
      if (expectUserId && expectUserId !== row.userId) throw new McpError('This sign-in was started by another Parley user: start it again while signed in as yourself.', 'refused');
      const server = await deps.store.read((tx) => findMcpServer(tx, row.serverId));
      if (!server?.url) throw new McpError('The MCP server of this sign-in was removed.', 'refused');
      const session = JSON.parse(await deps.sealer.open(row.flow)) as OAuthSession;
      try {
        const result = await runAuth(session, { ...(await deps.session(server)), serverUrl: server.url, fetchFn: deps.fetchFor(server), code, iss });
        if (result !== 'AUTHORIZED') throw new Error(`unexpected ${result}`);
      } catch (err) {
        throw signInError(err, server.name);
      }
      await saveSession(server.id, row.userId, session);
      return { serverId: server.id, serverName: server.name, userId: row.userId };
    },
    async disconnect(serverId, userId) {
      opened.delete(keyOf(serverId, userId));
      await deps.store.write((tx) => deleteMcpToken(tx, serverId, userId));
    },
  };
}

function signInError(err: unknown, name: string): McpError {
  if (err instanceof McpError) return err;
  if (isSdkError(err, 'OAuthError')) return new McpError(`The MCP server ${name}'s sign-in refused Parley (${err.message.slice(0, 200)}).`, 'refused', err.message);
  const e = mcpErrorOf(err, name);
  return e.kind === 'server' ? new McpError(`The MCP server ${name} does not offer a sign-in Parley can use (${err instanceof Error ? err.message.slice(0, 200) : 'no OAuth metadata'}).`, 'refused', e.detail) : e;
}
