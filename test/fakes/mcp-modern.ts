/**
 * A remote MCP server of the 2026-07-28 era, built with the official server SDK
 * (`@modelcontextprotocol/server`): no `initialize`, no sessions, `server/discover` first. With
 * `legacy: 'reject'` it answers 2025-era clients with an error, so a client that reaches it
 * speaks 2026-07-28; with `'stateless'` it serves both. One tool, `shout`; `calls` keeps the texts it
 * was asked to shout, so a test sees whether a call reached it.
 */
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

export function startModernMcp(legacy: 'reject' | 'stateless' = 'reject'): { url: string; calls: string[]; stop(): void } {
  const calls: string[] = [];
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'modern-fake', version: '1.0.0' });
      server.registerTool('shout', { description: 'Says the text in capitals.', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => {
        calls.push(text);
        return { content: [{ type: 'text', text: text.toUpperCase() }] };
      });
      return server;
    },
    { legacy },
  );
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (req) => (new URL(req.url).pathname === '/mcp' ? handler.fetch(req) : new Response('not found', { status: 404 })) });
  return { url: `http://127.0.0.1:${server.port}/mcp`, calls, stop: () => { server.stop(true); void handler.close(); } };
}
