/**
 * The MCP conformance suite's server scenarios against Parley's `/mcp` (docs/mcp-server.md,
 * "Conformance"): builds the binary (or takes --binary), starts it on a throwaway data directory
 * with a user and an API key made by its own CLI, and runs every server scenario of the pinned
 * `@modelcontextprotocol/conformance`. Each must pass, or be listed with its reason in
 * scripts/mcp/conformance-known-failures.yml; one that fails unlisted, or passes while listed,
 * fails the run (the suite's own baseline rule).
 *
 *   node_modules/.bin/bun run scripts/mcp/conformance-server.ts [--binary dist/parley] [--scenario NAME]
 *
 * The suite's client sends no credential and has no option for one, while Parley's `/mcp` needs
 * one: a small proxy in front of the server adds the key, and passes everything else on as sent
 * (the DNS-rebinding scenario's Host and Origin too). Runs under the pinned Bun, since the suite
 * needs a newer Node than Debian's.
 */
import { join } from 'node:path';
import { useRunTempDir } from '../lib/run-temp-dir';
import { buildBinary, createUserWithKey, flag, newDataDir, startServer } from '../fault/harness';

useRunTempDir('parley-mcp-conformance');
const root = join(import.meta.dir, '../..');
const suite = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const knownFailures = join(import.meta.dir, 'conformance-known-failures.yml');

const cmd = flag('binary', '') ? [flag('binary', '')] : buildBinary();
const dataDir = newDataDir('parley-mcp');
const key = createUserWithKey(cmd, dataDir, 'conformance@example.org');
const server = await startServer(cmd, dataDir);

// The suite asks loopback addresses only (its DNS-rebinding scenario insists), as the proxy is.
const proxy = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  idleTimeout: 0,
  async fetch(request) {
    const url = new URL(request.url);
    const headers = new Headers(request.headers);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${key}`);
    const upstream = await fetch(`${server.url}${url.pathname}${url.search}`, {
      method: request.method,
      headers,
      body: request.body,
      redirect: 'manual',
      signal: request.signal,
    });
    return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
  },
});

const scenario = flag('scenario', '');
const args = ['server', '--url', `http://127.0.0.1:${proxy.port}/mcp`, '--suite', 'all', '--expected-failures', knownFailures, ...(scenario ? ['--scenario', scenario] : [])];
const run = Bun.spawn([process.execPath, suite, ...args], { cwd: process.env.TMPDIR, stdout: 'inherit', stderr: 'inherit', env: process.env });
const code = await run.exited;
proxy.stop(true);
server.proc.kill('SIGTERM');
await server.proc.exited;
process.exit(code);
