import { Elysia } from 'elysia';
import type { AppDeps } from '../deps';
import { pageRoute } from '../http/register';
import type { Limits } from '../http/shared-limits';
import type { McpDoor } from './mcp-door';

export const MCP_PATH = '/mcp';
/** The methods `/mcp` answers (GET and DELETE: 405 from the SDK, the 2025 session operations a stateless server has not). */
export const MCP_METHODS = 'GET, POST, DELETE';

/**
 * `/mcp`, Parley as an MCP server over streamable HTTP (docs/mcp-server.md): mcp-door.ts checks
 * each request's origin and credential and hands it to the SDK's handler. `limits` are the app's,
 * which the operations and /v1 take from too (the `ai` bucket, open streams): one budget per user.
 *
 * The door, with the SDK's server and its tools' zod schemas, is loaded by the first request to
 * `/mcp`: a server no MCP client talks to does not hold them (with the MCP client's, 5 MB of a
 * 1 GB board's idle memory, more once the executable was split: bench/RESULTS.md "Idle memory").
 * A failure to load answers that request with the usual 500, logged, and the next request tries
 * again.
 */
export function mcpRoutes(deps: AppDeps, limits: Limits) {
  let door: Promise<McpDoor> | undefined;
  const opened = () =>
    (door ??= import('./mcp-door').then(
      ({ createMcpDoor }) => createMcpDoor(deps, limits),
      (err) => {
        door = undefined;
        throw err;
      },
    ));
  deps.lifecycle.onShutdown('mcp handler', async () => {
    if (door) await (await door.catch(() => undefined))?.close();
  });
  const serve = pageRoute<{ request: Request }>(deps, async ({ request }) => (await opened()).serve(request));
  return new Elysia({ name: 'mcp' })
    .post(MCP_PATH, serve, { parse: 'none' })
    .get(MCP_PATH, serve)
    .delete(MCP_PATH, serve, { parse: 'none' });
}
