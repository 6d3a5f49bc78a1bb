import type * as ClientSdk from '@modelcontextprotocol/client';
import type * as StdioSdk from '@modelcontextprotocol/client/stdio';

/**
 * The MCP SDK's client, loaded the first time Parley talks to an MCP server (a connection, a
 * sign-in, `parley mcp check`): with its zod schemas and the /mcp door's SDK it was 5 MB of a
 * server's idle memory, which a server whose users have no MCP server need not hold on a 1 GB
 * board (bench/RESULTS.md, "Idle memory"). A failure to load fails that use with
 * McpSdkUnavailable (mcp-errors.ts words it for the user) and the next use tries again.
 */
export type McpClientSdk = typeof ClientSdk & typeof StdioSdk;

let loading: Promise<McpClientSdk> | undefined;
let loaded: McpClientSdk | undefined;

export function loadMcpSdk(): Promise<McpClientSdk> {
  return (loading ??= Promise.all([import('@modelcontextprotocol/client'), import('@modelcontextprotocol/client/stdio')]).then(
    ([client, stdio]) => (loaded = { ...client, ...stdio }),
    (err) => {
      loading = undefined;
      throw new McpSdkUnavailable(err);
    },
  ));
}

export class McpSdkUnavailable extends Error {
  constructor(cause: unknown) {
    super(`Parley could not load its MCP client (${cause instanceof Error ? cause.message : String(cause)}).`, { cause });
    this.name = 'McpSdkUnavailable';
  }
}

type ErrorClass = 'OAuthError' | 'UnauthorizedError' | 'SdkError' | 'SdkHttpError' | 'ProtocolError';

/** Whether `err` is one of the SDK's errors: never before the SDK is loaded, since nothing could have thrown one. */
export function isSdkError<K extends ErrorClass>(err: unknown, name: K): err is InstanceType<McpClientSdk[K]> {
  const cls = loaded?.[name];
  return cls !== undefined && err instanceof cls;
}

/** The SDK's error codes, for an error `isSdkError` recognised (so the SDK is loaded). */
export const sdkErrorCodes = (): McpClientSdk['SdkErrorCode'] => loaded!.SdkErrorCode;
