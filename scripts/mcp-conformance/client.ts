/**
 * The MCP conformance suite's client adapter: the suite starts a scenario's server and runs
 * `bun scripts/mcp-conformance/client.ts <url>` with MCP_CONFORMANCE_SCENARIO (and, for some,
 * MCP_CONFORMANCE_CONTEXT) set. This turns the scenario into the arguments of `parley mcp check`
 * (cli/mcp.ts), which runs Parley's own MCP client code, and exits with its status.
 */
import { join } from 'node:path';

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
if (!url) {
  console.error('usage: MCP_CONFORMANCE_SCENARIO=<scenario> bun scripts/mcp-conformance/client.ts <url>');
  process.exit(2);
}
const context = process.env.MCP_CONFORMANCE_CONTEXT ? (JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) as Record<string, string>) : {};

/** The tool each scenario's server expects a call of. */
const CALLS: Record<string, string[]> = {
  tools_call: ['add_numbers={"a":5,"b":3}'],
  'elicitation-sep1034-client-defaults': ['test_client_elicitation_defaults'],
  'sse-retry': ['test_reconnection'],
};
const args = ['mcp', 'check', url];
for (const call of CALLS[scenario] ?? (scenario.startsWith('auth/') ? ['test-tool'] : [])) args.push('--call', call);
if (context.client_id) args.push('--client-id', context.client_id);
// The secret goes through standard input, as an admin would give it.
if (context.client_secret) args.push('--client-secret', '-');
if (scenario === 'auth/basic-cimd') args.push('--client-metadata-url', 'https://conformance-test.local/client-metadata.json');

const root = join(import.meta.dir, '..', '..');
const proc = Bun.spawn([process.execPath, join(root, 'cli', 'main.ts'), ...args], {
  cwd: root,
  stdin: context.client_secret ? new Blob([context.client_secret]) : 'ignore',
  stdout: 'inherit',
  stderr: 'inherit',
});
process.exit(await proc.exited);
