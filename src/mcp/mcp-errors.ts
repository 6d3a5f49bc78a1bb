import { SafeFetchError } from '../net/safe-fetch';
import { isSdkError, McpSdkUnavailable, sdkErrorCodes } from './mcp-sdk';

/**
 * Why an MCP server could not be used, in a sentence the user may read (in `mcp_call.error`, a
 * test's answer, the CLI). `counts` says whether the failure is the server's (the circuit breaker
 * counts it) or not (the user's sign-in, a refusal of Parley's own). `detail` is for the log.
 */
export type McpFailure = 'unreachable' | 'timeout' | 'too_large' | 'sign_in' | 'refused' | 'breaker' | 'server' | 'closed';

export class McpError extends Error {
  constructor(
    message: string,
    readonly kind: McpFailure,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'McpError';
  }

  /** Whether the server's health is to blame (the breaker counts these). */
  get counts(): boolean {
    return this.kind === 'unreachable' || this.kind === 'timeout' || this.kind === 'closed' || this.kind === 'server';
  }
}

const causeText = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/** Any failure met while talking to server `name`, as an McpError with words for the user. */
export function mcpErrorOf(err: unknown, name: string, connectionError?: Error): McpError {
  if (err instanceof McpError) return err;
  if (err instanceof McpSdkUnavailable) return new McpError(`The MCP server ${name} could not be used: ${err.message}`, 'refused', String(err.cause));
  // A stdio message past the read buffer closes the pipe; the call only sees the close.
  if (connectionError && /ReadBuffer exceeded maximum size of (\d+)/.test(connectionError.message))
    return new McpError(`The MCP server ${name} answered more than ${connectionError.message.match(/(\d+) bytes/)?.[1]} bytes (PARLEY_MCP_RESULT_MAX_BYTES), so Parley stopped reading it.`, 'too_large', connectionError.message);
  // Parley's own refusals carried through the SDK's fetch (the SSRF guard, the size cap).
  const own = findCause(err, (e) => e instanceof McpError || e instanceof SafeFetchError);
  if (own instanceof McpError) return own;
  if (own instanceof SafeFetchError) {
    if (own.reason === 'PRIVATE_ADDRESS') return new McpError(`The MCP server ${name} is on a private or local address, which this server does not allow for users' own servers.`, 'refused', own.message);
    if (own.reason === 'DNS') return new McpError(`The MCP server ${name} could not be found (its host name does not resolve).`, 'unreachable', own.message);
    return new McpError(`The MCP server ${name} could not be reached (${own.message}).`, 'unreachable', own.message);
  }
  if (isSdkError(err, 'UnauthorizedError') || (err instanceof Error && err.name === 'UnauthorizedError'))
    return new McpError(`The MCP server ${name} asks you to sign in: connect it in Settings → MCP servers.`, 'sign_in', causeText(err));
  if (isSdkError(err, 'SdkHttpError')) {
    const status = err.data?.status;
    if (status === 401 || status === 403) return new McpError(`The MCP server ${name} refused the credential (HTTP ${status}).`, 'sign_in', causeText(err));
    return new McpError(`The MCP server ${name} answered HTTP ${status ?? 'error'}.`, 'server', causeText(err));
  }
  const text = causeText(err);
  if (/ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ConnectionRefused|Unable to connect|ENOENT|EACCES|spawn/i.test(text))
    return new McpError(`The MCP server ${name} could not be reached.`, 'unreachable', text);
  if (isSdkError(err, 'SdkError')) {
    const SdkErrorCode = sdkErrorCodes();
    if (err.code === SdkErrorCode.RequestTimeout) return new McpError(`The MCP server ${name} did not answer in time.`, 'timeout', causeText(err));
    if (err.code === SdkErrorCode.ConnectionClosed) return new McpError(`The MCP server ${name} closed the connection before it answered.`, 'closed', causeText(err));
    if (err.code === SdkErrorCode.NotConnected) return new McpError(`The connection to the MCP server ${name} was lost.`, 'closed', causeText(err));
    return new McpError(`The MCP server ${name} could not be used (${err.message.slice(0, 200)}).`, 'server', causeText(err));
  }
  if (isSdkError(err, 'ProtocolError')) return new McpError(`The MCP server ${name} answered with an error: ${err.message.slice(0, 300)}`, 'server', causeText(err));
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'))
    return new McpError(`The MCP server ${name} did not answer in time.`, 'timeout', causeText(err));
  return new McpError(`The MCP server ${name} failed.`, 'server', text);
}

function findCause(err: unknown, test: (e: unknown) => boolean): unknown {
  for (let e = err, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) if (test(e)) return e;
  return undefined;
}
