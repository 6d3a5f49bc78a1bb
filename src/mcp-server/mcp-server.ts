import { createMcpHandler, McpServer, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { AppDeps } from '../deps';
import { VERSION } from '../version';
import { findUser } from '../account/account.store';
import { registerResearchTools } from './research.tools';
import { registerSearchTools } from './search.tools';
import { registerMemoryTools } from './memory.tools';
import { registerReportResources } from './report.resources';
import { registerResearchPrompt } from './research.prompt';
import type { McpCaller } from './mcp-tool';

const INSTRUCTIONS =
  "Parley is the user's own AI server. Use start_research for questions that need a researched, cited report (it runs for minutes in the background), " +
  'then follow_research to watch it and get the report; search_files and search_history find what the user already keeps in Parley' +
  '; the memory tools, when offered, keep facts about the user that Parley\'s own assistant reads too.';

/** The largest MCP request body read: a tool call's arguments, a research question of 20,000 characters with room to spare. */
export const MCP_MAX_BODY_BYTES = 256 * 1024;

/**
 * Parley's MCP server (docs/mcp-server.md): a fresh `McpServer` for every HTTP request, built for
 * the caller the request authenticated as (`authInfo.extra.caller`), serving both protocol eras
 * statelessly: 2026-07-28 natively, 2025-era clients (`initialize`, 2025-11-25 and older) through
 * the SDK's stateless fallback. Nothing lives between requests, so any instance answers any of
 * them; what must outlive one (a research run, its events) is in the database already.
 */
export function createParleyMcpHandler(deps: AppDeps): McpHttpHandler {
  return createMcpHandler(
    async ({ authInfo }) => {
      const caller = authInfo?.extra?.caller as McpCaller | undefined;
      const server = new McpServer({ name: 'parley', title: 'Parley', version: VERSION }, { capabilities: { logging: {} }, instructions: INSTRUCTIONS });
      // No caller only for requests the route let through unauthenticated (none today): an empty server.
      if (!caller) return server;
      registerResearchTools(server, deps, caller);
      registerSearchTools(server, deps, caller);
      // Read now rather than from the credential: a preference changed a moment ago counts.
      if ((await deps.store.read((tx) => findUser(tx, caller.user.id)))?.enableMemories) registerMemoryTools(server, deps, caller);
      registerReportResources(server, deps, caller);
      registerResearchPrompt(server);
      return server;
    },
    {
      legacy: 'stateless',
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
      onerror: (err) => deps.log.warn('mcp request refused', { error: err.message }),
      keepAliveMs: deps.config.sseHeartbeatSeconds * 1000,
    },
  );
}
