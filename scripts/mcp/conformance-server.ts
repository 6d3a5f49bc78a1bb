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
 * one: a small proxy in front of the server adds it, and passes everything else on as sent (the
 * DNS-rebinding scenario's Host and Origin too). The suite runs twice, once per kind of credential
 * (`--credential key` or `oauth` for one): the API key, then an OAuth access token the script gets
 * as an MCP client does (registration, PKCE, the user's consent through the mcpAccess/* operations,
 * the code traded at the token endpoint). The suite has no server scenarios for authorization
 * itself (its auth scenarios test clients); test/mcp-server-oauth.test.ts covers that. Runs under
 * the pinned Bun, since the suite needs a newer Node than Debian's.
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

/** An OAuth access token for the user, got the way an MCP client gets one (docs/mcp-server.md, "OAuth"). */
async function oauthAccessToken(): Promise<string> {
  const redirect = 'http://127.0.0.1:9/callback';
  const post = async (path: string, body: string, type: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': type, ...headers }, body });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  const client = await post('/mcp/oauth/register', JSON.stringify({ client_name: 'conformance', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }), 'application/json');
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
  const codeChallenge = new Bun.CryptoHasher('sha256').update(verifier).digest('base64url');
  const request = { clientId: client.client_id, redirectUri: redirect, responseType: 'code', codeChallenge, codeChallengeMethod: 'S256', scope: 'mcp' };
  const approved = await post('/api/mcpAccess/approveAuthorization', JSON.stringify(request), 'application/json', { 'x-api-key': key });
  const code = new URL(approved.redirectTo!).searchParams.get('code')!;
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirect, client_id: client.client_id!, code_verifier: verifier });
  return (await post('/mcp/oauth/token', form.toString(), 'application/x-www-form-urlencoded')).access_token!;
}

const credentials: Record<string, () => Promise<string>> = { key: async () => key, oauth: oauthAccessToken };
const only = flag('credential', '');
let token = '';

// The suite asks loopback addresses only (its DNS-rebinding scenario insists), as the proxy is.
const proxy = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  idleTimeout: 0,
  async fetch(request) {
    const url = new URL(request.url);
    const headers = new Headers(request.headers);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
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
let code = 0;
for (const [kind, get] of Object.entries(credentials)) {
  if (only && only !== kind) continue;
  token = await get();
  console.log(`\n== the server scenarios with ${kind === 'key' ? 'an API key' : 'an OAuth access token'} ==`);
  const run = Bun.spawn([process.execPath, suite, ...args], { cwd: process.env.TMPDIR, stdout: 'inherit', stderr: 'inherit', env: process.env });
  code ||= await run.exited;
}
proxy.stop(true);
server.proc.kill('SIGTERM');
await server.proc.exited;
process.exit(code);
