import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { expectAccessible, startWorld, type World } from './harness';

let world: World;
let callback: ReturnType<typeof Bun.serve>;
let arrived: URL[] = [];
beforeAll(async () => {
  world = await startWorld();
  // The MCP client's loopback listener, where the browser is sent back with the code.
  callback = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      arrived.push(new URL(request.url));
      return new Response('You may close this window.');
    },
  });
}, 240_000);
afterAll(async () => {
  callback?.stop(true);
  await world?.stop();
});

const redirectUri = () => `http://127.0.0.1:${callback.port}/callback`;

/** An MCP client registers itself and sends its user to the consent page: the address it opens, and its PKCE verifier. */
async function clientAsks(): Promise<{ clientId: string; authorize: string; verifier: string }> {
  const res = await fetch(`${world.url}/mcp/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Editor', redirect_uris: [redirectUri()], token_endpoint_auth_method: 'none' }),
  });
  const { client_id: clientId } = (await res.json()) as { client_id: string };
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
  const challenge = new Bun.CryptoHasher('sha256').update(verifier).digest('base64url');
  const q = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri(), response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', state: 'st8', scope: 'mcp' });
  return { clientId, authorize: `${world.url}/oauth/authorize?${q}`, verifier };
}

const initialize = (token: string) =>
  fetch(`${world.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
  });

describe('connecting an MCP client, in Chromium through the compiled binary', () => {
  test('signed out, the consent page asks to sign in and comes back; Allow returns a code that trades for a token; Settings disconnects it', async () => {
    const { clientId, authorize, verifier } = await clientAsks();
    const context = await world.browser.newContext();
    const page = await context.newPage();
    await page.goto(authorize);
    await page.getByRole('button', { name: 'Sign in' }).or(page.getByText('Sign in', { exact: false }).first()).first().waitFor();
    // Signed in with a login link in the same browser: back on the consent page, its request intact.
    await page.goto(await world.loginLink());
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('asks to use Parley as ann@example.org').waitFor();
    await expect(page.getByText(`You will be sent back to 127.0.0.1:${callback.port}`).isVisible()).resolves.toBe(true);
    await expectAccessible(page, 'the consent page');
    arrived = [];
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.port === String(callback.port));
    const back = arrived[0]!;
    expect(back.searchParams.get('state')).toBe('st8');
    const tokens = (await (
      await fetch(`${world.url}/mcp/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: redirectUri(), client_id: clientId, code_verifier: verifier }),
      })
    ).json()) as { access_token: string };
    expect((await initialize(tokens.access_token)).status).toBe(200);

    // Settings: the /mcp address to give an application, and the one connected, disconnected.
    await page.goto(`${world.url}/settings`);
    const mcp = page.getByRole('region', { name: 'Use Parley from other apps (MCP)' });
    await expect(mcp.getByLabel("Address of Parley's MCP server").inputValue()).resolves.toBe(`${world.url}/mcp`);
    await mcp.getByText('Editor', { exact: true }).waitFor();
    page.once('dialog', (d) => void d.accept());
    await mcp.getByRole('button', { name: 'Disconnect' }).click();
    await mcp.getByText('No application is connected with OAuth.').waitFor();
    expect((await initialize(tokens.access_token)).status).toBe(401);
    await context.close();
  });

  test('Deny returns access_denied to the client; a redirect the client did not register is shown, not followed', async () => {
    const { context, page } = await world.signedIn();
    const { authorize } = await clientAsks();
    await page.goto(authorize);
    arrived = [];
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL((url) => url.port === String(callback.port));
    expect(arrived[0]!.searchParams.get('error')).toBe('access_denied');

    const elsewhere = new URL(authorize);
    elsewhere.searchParams.set('redirect_uri', 'https://evil.example.com/cb');
    await page.goto(elsewhere.href);
    await page.getByRole('alert').getByText('will not send you there').waitFor();
    await context.close();
  });
});
