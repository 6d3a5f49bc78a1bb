import type { Tool } from '@modelcontextprotocol/client';
import type { AppDeps } from '../deps';
import type { McpServerRow } from '../db/schema';
import type { SourceTool, ToolSource, ToolTurn } from '../tools/tool.types';
import { mcpErrorOf } from './mcp-errors';
import { mapResult } from './mcp-result';

/**
 * The MCP tool source (src/tools/): every tool of the servers a user may use, offered to the
 * model under a name of its own, `mcp__<server>__<tool>`, within the providers' rules for
 * function names (`[a-zA-Z0-9_-]`, at most 64 characters: OpenAI's limit, the strictest). A call
 * streams `mcp_call.in_progress`, then `mcp_call.completed` with what it showed, or
 * `mcp_call.error` with a sentence; the model reads the result's text, or why there is none
 * (docs/mcp.md). Default priority: when a turn's tools do not fit its budget, the servers'
 * tools go before Parley's own.
 */
export const mcpToolSource: ToolSource = {
  id: 'mcp',
  label: 'MCP servers',
  async tools(turn) {
    const listed = await turn.deps.mcp.toolsFor(turn.user.id, { serverIds: serversAllowed(turn) });
    return listed.flatMap(({ server, tools }) => tools.map((tool) => toolOf(turn.deps, server, tool, turn)));
  },
};

export const NAME_MAX = 64;

/** `mcp__<server>__<tool>` in `[a-zA-Z0-9_-]{1,64}`; a longer one keeps its start and a hash of the whole, so names stay apart. */
export function toolNameOf(server: string, tool: string): string {
  const clean = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, '_');
  const name = `mcp__${clean(server)}__${clean(tool)}`;
  if (name.length <= NAME_MAX && clean(tool) === tool) return name;
  const hash = new Bun.CryptoHasher('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8);
  return `${name.slice(0, NAME_MAX - hash.length - 1)}_${hash}`;
}

/** An assistant that names MCP servers gets those only (among the user's); otherwise every server the user may use. */
function serversAllowed(turn: ToolTurn): readonly string[] | undefined {
  return turn.assistant?.mcpServerIds ?? undefined;
}

function toolOf(deps: AppDeps, server: McpServerRow, tool: Tool, turn: Pick<ToolTurn, 'user' | 'signal'>): SourceTool {
  const parameters = (tool.inputSchema ?? { type: 'object', properties: {} }) as Record<string, unknown>;
  const description = (tool.description || tool.title || tool.name).slice(0, 1024);
  const userId = turn.user.id;
  return {
    name: toolNameOf(server.name, tool.name),
    description: `${description} (MCP server ${server.name})`,
    parameters,
    approval: server.approval,
    label: `${server.name}: ${tool.title ?? tool.annotations?.title ?? tool.name}`,
    async run(args, emit, callId, callKey) {
      emit({ type: 'mcp_call.in_progress', itemId: callId, server: server.name, tool: tool.name, arguments: args });
      try {
        const result = await deps.mcp.call(server, userId, tool.name, args, { signal: turn.signal });
        const mapped = await mapResult(deps, result, { userId, callKey, maxChars: deps.config.mcpResultMaxChars });
        if (result.isError) {
          emit({ type: 'mcp_call.error', itemId: callId, error: mapped.text.slice(0, 2000) });
          return `The tool reported an error:\n${mapped.text}`;
        }
        emit({ type: 'mcp_call.completed', itemId: callId, content: mapped.content });
        return mapped.text;
      } catch (raw) {
        const err = mcpErrorOf(raw, server.name);
        deps.log.warn('mcp call failed', { server: server.name, tool: tool.name, itemId: callId, reason: err.kind, ...(err.detail ? { detail: err.detail } : {}) });
        emit({ type: 'mcp_call.error', itemId: callId, error: err.message });
        return `The tool call failed: ${err.message}`;
      }
    },
  };
}
