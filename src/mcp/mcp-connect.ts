import type { AuthProvider, Client, OAuthClientProvider, ElicitRequest, ElicitResult, Transport } from '@modelcontextprotocol/client';
import { VERSION } from '../version';
import { mcpFetch, type McpFetchOptions } from './mcp-fetch';
import { McpError, mcpErrorOf } from './mcp-errors';
import { isSdkError, loadMcpSdk, type McpClientSdk } from './mcp-sdk';

/**
 * One connected MCP client, over the transport its server row says: streamable HTTP (falling
 * back to the older HTTP+SSE transport when the endpoint refuses a streamable POST), or a stdio
 * process of the admin's configuration. The SDK negotiates the protocol: 2026-07-28 through
 * `server/discover` when the server offers it, else the 2025 `initialize` (2025-11-25 and older).
 */
export interface McpTarget {
  name: string;
  transport: 'http' | 'stdio';
  url?: string | null;
  command?: string[] | null;
  headers?: Record<string, string>;
  env?: Record<string, string>;
}

export interface ConnectOptions {
  timeoutMs: number;
  maxBytes: number;
  guard?: McpFetchOptions['guard'];
  auth?: AuthProvider | OAuthClientProvider;
  /** The era a previous connection found, so stdio servers are not probed (a second process) every time. */
  era?: 'modern' | 'legacy';
  /** Answers a form elicitation (`parley mcp check`); without it the client offers none and servers do not ask. */
  elicit?: (request: ElicitRequest['params']) => Promise<ElicitResult>;
  /** A stdio server's standard error, line by line (the log's, for the admin). */
  onStderr?: (line: string) => void;
  onListChanged?: () => void;
}

export interface Connected {
  client: Client;
  transport: Transport;
  era: 'modern' | 'legacy';
  /** `streamable-http`, `sse` or `stdio`. */
  via: 'streamable-http' | 'sse' | 'stdio';
  /** The transport's last error (a stdio message too large, which closes the pipe): what a failed call is explained by. */
  lastError?: Error;
}

/** Keeps the transport's last error on the connection (the client's own handler only logs). */
function watched(conn: Connected): Connected {
  conn.client.onerror = (err) => {
    conn.lastError = err;
  };
  return conn;
}

const newClient = ({ Client }: McpClientSdk, opts: ConnectOptions) => {
  const client = new Client(
    { name: 'parley', version: VERSION },
    {
      versionNegotiation: { mode: 'auto' },
      capabilities: opts.elicit ? { elicitation: { form: { applyDefaults: true } } } : {},
      listChanged: opts.onListChanged ? { tools: { onChanged: () => opts.onListChanged?.(), autoRefresh: false } } : undefined,
    },
  );
  if (opts.elicit) {
    const elicit = opts.elicit;
    client.setRequestHandler('elicitation/create', (request) => elicit(request.params));
  }
  return client;
};

export async function connectMcp(target: McpTarget, opts: ConnectOptions): Promise<Connected> {
  const sdk = await loadMcpSdk();
  if (target.transport === 'stdio') return connectStdio(sdk, target, opts);
  const { StreamableHTTPClientTransport, SSEClientTransport } = sdk;
  if (!target.url) throw new McpError(`The MCP server ${target.name} has no URL.`, 'refused');
  const url = new URL(target.url);
  const fetch = mcpFetch({ guard: opts.guard, headers: target.headers, maxBytes: opts.maxBytes, serverName: target.name });
  const streamable = new StreamableHTTPClientTransport(url, { fetch, authProvider: opts.auth });
  const client = newClient(sdk, opts);
  try {
    await client.connect(streamable, { timeout: opts.timeoutMs, ...(opts.era === 'legacy' ? { prior: { kind: 'legacy' } } : {}) });
    return watched({ client, transport: streamable, era: eraOf(client), via: 'streamable-http' });
  } catch (err) {
    await client.close().catch(() => undefined);
    if (!refusesStreamable(err)) throw mcpErrorOf(err, target.name);
  }
  // An older server (protocol 2024-11-05): a GET that opens an event stream, then POSTs to the endpoint it names.
  const sse = new SSEClientTransport(url, { fetch, authProvider: opts.auth });
  const legacy = newClient(sdk, opts);
  try {
    await legacy.connect(sse, { timeout: opts.timeoutMs, prior: { kind: 'legacy' } });
  } catch (err) {
    await legacy.close().catch(() => undefined);
    throw mcpErrorOf(err, target.name);
  }
  return watched({ client: legacy, transport: sse, era: 'legacy', via: 'sse' });
}

/** What an endpoint of the older HTTP+SSE transport answers a streamable POST with (the spec's fallback rule: a 4xx). */
function refusesStreamable(err: unknown): boolean {
  const status = isSdkError(err, 'SdkHttpError') ? err.data?.status : undefined;
  if (status !== undefined) return status >= 400 && status < 500 && status !== 401 && status !== 403;
  return /\b(404|405)\b|Unexpected content type|unusable reply/i.test(err instanceof Error ? err.message : '');
}

async function connectStdio(sdk: McpClientSdk, target: McpTarget, opts: ConnectOptions): Promise<Connected> {
  const { getDefaultEnvironment, StdioClientTransport } = sdk;
  const [command, ...args] = target.command ?? [];
  if (!command) throw new McpError(`The MCP server ${target.name} has no command.`, 'refused');
  // A minimal environment (PATH, HOME, USER, SHELL, TERM…) and what the admin gave it: never
  // Parley's own, which holds keys for every other service.
  const transport = new StdioClientTransport({ command, args, env: { ...getDefaultEnvironment(), ...target.env }, stderr: 'pipe', maxBufferSize: opts.maxBytes });
  const stderr = transport.stderr;
  if (stderr && opts.onStderr) {
    let pending = '';
    stderr.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) opts.onStderr?.(line.slice(0, 500));
    });
  }
  const client = newClient(sdk, opts);
  try {
    await client.connect(transport, { timeout: opts.timeoutMs, ...(opts.era === 'legacy' ? { prior: { kind: 'legacy' } } : {}) });
  } catch (err) {
    await client.close().catch(() => undefined);
    throw mcpErrorOf(err, target.name);
  }
  return watched({ client, transport, era: eraOf(client), via: 'stdio' });
}

const eraOf = (client: Client): 'modern' | 'legacy' => (client.getProtocolEra() === 'modern' ? 'modern' : 'legacy');
