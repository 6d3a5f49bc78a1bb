/** An access token Parley issued to an MCP client (docs/mcp-server.md, "OAuth"). */
export const OAUTH_ACCESS_PREFIX = 'pma_';
