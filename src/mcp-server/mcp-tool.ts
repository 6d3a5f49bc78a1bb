import type { CallToolResult } from '@modelcontextprotocol/server';
import type { User } from '../db/schema';
import type { Limits } from '../http/shared-limits';
import { AppError } from '../http/errors';

/** Who calls, for every tool and resource of one MCP request (src/mcp-server/mcp-server.ts). */
export interface McpCaller {
  user: User;
  /** The HTTP request's id: the log lines of a research it starts carry it. */
  requestId: string;
  /** The server's per-user rate limits (the `ai` bucket for a research start). */
  limits: Limits;
}

/** A tool's answer: text for the model, and the same as data for clients that read it. */
export function answer(text: string, structuredContent?: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], ...(structuredContent ? { structuredContent } : {}) };
}

/**
 * A refusal the model can read and act on (a tool error, not a protocol error: MCP clients show
 * these to the model, which then corrects its call).
 */
export const refusal = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/**
 * Run a tool's body, turning the API's own refusals (an unknown model, a cap, a search not set up)
 * into tool errors with the same sentence the API would answer. Anything else is a server fault
 * and stays one: the SDK answers it as an error without the details.
 */
export async function refusingAppErrors(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError && (err.status < 500 || err.expected)) return refusal(err.message);
    throw err;
  }
}
