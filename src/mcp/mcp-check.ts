import type { CallToolResult, ElicitResult } from '@modelcontextprotocol/client';
import { connectMcp } from './mcp-connect';
import { mcpFetch } from './mcp-fetch';
import { McpError, mcpErrorOf } from './mcp-errors';
import { isSdkError } from './mcp-sdk';
import { runAuth, sessionProvider, type OAuthSession, type SessionOptions } from './mcp-oauth-session';

/**
 * `parley mcp check URL`: Parley's MCP client code run once against a URL, without a database:
 * connect (streamable HTTP, else HTTP+SSE), sign in when the server asks (OAuth 2.1 through the
 * same session code users' sign-ins use, the browser's part done here: the authorization URL is
 * fetched and its redirect's code taken, as an authorization server that approves at once
 * allows), list the tools, call the ones asked for. A form elicitation is accepted with the
 * defaults the server gives. It is the adapter the MCP conformance suite drives
 * (scripts/mcp-conformance.ts), and an admin's way to see what a server offers.
 */
export interface CheckOptions {
  calls: { name: string; args: Record<string, unknown> }[];
  timeoutMs: number;
  maxBytes: number;
  headers?: Record<string, string>;
  /** A pre-registered OAuth client. */
  clientId?: string;
  clientSecret?: string;
  /** An https URL of Parley's client metadata document, for servers that take one. */
  clientMetadataUrl?: string;
  log?: (line: string) => void;
}

export interface CheckResult {
  protocolVersion: string | null;
  transport: string;
  serverInfo: { name: string; version: string } | null;
  tools: string[];
  calls: { name: string; isError: boolean; text: string }[];
  signedIn: boolean;
}

/** Sign-ins one check may go through (a server that keeps asking for more scope must not loop). */
const MAX_SIGN_INS = 3;
const REDIRECT_URL = 'http://localhost:3000/callback';

export async function checkMcpUrl(url: string, opts: CheckOptions): Promise<CheckResult> {
  const log = opts.log ?? (() => undefined);
  const session: OAuthSession = {};
  let pending: { code: string; iss?: string } | undefined;
  let redirects = 0;
  const fetchFn = mcpFetch({ maxBytes: opts.maxBytes, serverName: url });
  const sessionOpts: SessionOptions = {
    redirectUrl: REDIRECT_URL,
    clientMetadataUrl: opts.clientMetadataUrl,
    ...(opts.clientId ? { preregistered: { client_id: opts.clientId, ...(opts.clientSecret ? { client_secret: opts.clientSecret } : {}) } } : {}),
    // The browser's part: open the authorization URL and take the code from where it sends us back.
    onRedirect: async (authorizationUrl) => {
      if (++redirects > MAX_SIGN_INS) throw new McpError(`The MCP server ${url} still refuses after ${MAX_SIGN_INS} sign-ins.`, 'sign_in');
      log(`sign-in: ${authorizationUrl.origin}${authorizationUrl.pathname}`);
      const res = await fetch(authorizationUrl, { redirect: 'manual' });
      await res.body?.cancel().catch(() => undefined);
      const location = res.headers.get('location');
      if (!location) throw new McpError(`The authorization server answered HTTP ${res.status} without sending the browser back.`, 'sign_in');
      const back = new URL(location, authorizationUrl);
      const code = back.searchParams.get('code');
      if (!code) throw new McpError(`The authorization server sent the browser back without a code (${back.searchParams.get('error') ?? 'no error given'}).`, 'sign_in');
      if (session.state && back.searchParams.get('state') !== session.state) throw new McpError('The authorization server sent back another state than Parley gave it.', 'sign_in');
      pending = { code, iss: back.searchParams.get('iss') ?? undefined };
    },
  };
  const elicit = async (): Promise<ElicitResult> => ({ action: 'accept', content: {} });

  for (;;) {
    const provider = sessionProvider(session, sessionOpts);
    let conn: Awaited<ReturnType<typeof connectMcp>> | undefined;
    try {
      conn = await connectMcp({ name: url, transport: 'http', url, headers: opts.headers }, { timeoutMs: opts.timeoutMs, maxBytes: opts.maxBytes, auth: provider, elicit });
      const version = conn.client.getNegotiatedProtocolVersion() ?? null;
      log(`connected: ${conn.via}, protocol ${version}`);
      const tools = (await conn.client.listTools()).tools;
      log(`tools: ${tools.map((t) => t.name).join(', ') || 'none'}`);
      const calls: CheckResult['calls'] = [];
      for (const call of opts.calls) {
        const result = (await conn.client.callTool({ name: call.name, arguments: call.args }, { timeout: opts.timeoutMs })) as CallToolResult;
        const text = (result.content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
        log(`${call.name}: ${result.isError ? 'error: ' : ''}${text.slice(0, 200)}`);
        calls.push({ name: call.name, isError: !!result.isError, text });
      }
      const info = conn.client.getServerVersion();
      return { protocolVersion: version, transport: conn.via, serverInfo: info ? { name: info.name, version: info.version } : null, tools: tools.map((t) => t.name), calls, signedIn: !!session.tokens };
    } catch (err) {
      const code = pending;
      pending = undefined;
      const wantsSignIn = isSdkError(err, 'UnauthorizedError') || (err instanceof McpError && err.kind === 'sign_in') || code !== undefined;
      if (!wantsSignIn || !code) {
        const e = mcpErrorOf(err, url);
        if (e.detail) log(`detail: ${e.detail}`);
        throw e;
      }
      // The code for the tokens, then everything again on a fresh connection.
      await runAuth(session, { ...sessionOpts, serverUrl: url, fetchFn, code: code.code, iss: code.iss });
      log('signed in');
    } finally {
      await conn?.client.close().catch(() => undefined);
    }
  }
}
