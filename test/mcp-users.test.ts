/**
 * Users' own MCP servers: only when the admin allows them; remote only; never on this machine or
 * the LAN unless the admin allows that too (checked when added and again on every request, after
 * DNS); what a user sees of the admin's servers (no command, no environment, no header values).
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { updateUser } from '../src/account/account.store';
import { addMcpServer } from '../src/mcp/mcp-server.service';
import { listUsableMcpServers } from '../src/mcp/mcp-server.store';
import { everythingStdio, startEverythingHttp, type RunningServer } from './support/mcp-servers';

setDefaultTimeout(60_000);

const running: RunningServer[] = [];
const contexts: TestContext[] = [];
afterAll(async () => {
  for (const c of contexts) await c.deps.mcp.close();
  for (const s of running) s.stop();
});

async function setup() {
  const ctx = await createTestContext({ users: [{ email: 'admin@example.org' }, { email: 'ann@example.org' }, { email: 'bob@example.org' }], config: { rateLimitWrite: { capacity: 1000, perMs: 1000 } } });
  contexts.push(ctx);
  const [admin, ann, bob] = ctx.users as [TestUser, TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  return { ctx, admin, ann, bob };
}

describe("users' own servers", () => {
  test('refused while the admin does not allow them', async () => {
    const { ctx, ann } = await setup();
    const res = await ctx.json('mcp/addServer', { name: 'mine', url: 'https://93.184.215.14/mcp' }, ann);
    expect(res.status).toBe(403);
    expect(res.body.data.detail).toBe("This server's admin does not let users add their own MCP servers.");
    expect((await ctx.json('mcp/listServers', {}, ann)).body.userServers).toBe(false);
  });

  test('a private, loopback or local name is refused, in words; the admin may allow it', async () => {
    const { ctx, admin, ann } = await setup();
    await ctx.json('admin/setMcpSettings', { userServers: true }, admin);
    for (const url of ['http://127.0.0.1:3001/mcp', 'http://10.1.2.3/mcp', 'http://[::1]:8080/mcp', 'http://169.254.169.254/latest', 'http://localhost:3001/mcp']) {
      const res = await ctx.json('mcp/addServer', { name: 'inside', url }, ann);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/private or local address; this server does not let users add MCP servers there\.$/);
    }
    expect(await ctx.count('mcp_servers')).toBe(0);
    await ctx.json('admin/setMcpSettings', { userServersAllowPrivate: true }, admin);
    expect((await ctx.json('mcp/addServer', { name: 'inside', url: 'http://127.0.0.1:3001/mcp' }, ann)).status).toBe(200);
  });

  test('checked on every request too: a server allowed once is refused when the admin withdraws local addresses', async () => {
    const { ctx, admin, ann } = await setup();
    const http = await startEverythingHttp('streamableHttp');
    running.push(http);
    await ctx.json('admin/setMcpSettings', { userServers: true, userServersAllowPrivate: true }, admin);
    const added = await ctx.json('mcp/addServer', { name: 'mine', url: http.url }, ann);
    expect((await ctx.json('mcp/testServer', { id: added.body.server.id }, ann)).body).toMatchObject({ ok: true, transport: 'streamable-http' });
    await ctx.json('admin/setMcpSettings', { userServersAllowPrivate: false }, admin);
    const tested = await ctx.json('mcp/testServer', { id: added.body.server.id }, ann);
    expect(tested.body).toMatchObject({ ok: false });
    expect(tested.body.error).toBe('The MCP server mine is on a private or local address, which this server does not allow for users\' own servers.');
  });

  test("another user's server is theirs alone; the admin's servers show no command, environment or header values", async () => {
    const { ctx, admin, ann, bob } = await setup();
    await ctx.json('admin/setMcpSettings', { userServers: true }, admin);
    await addMcpServer(ctx.deps, { kind: 'cli' }, { name: 'shared', transport: 'stdio', command: everythingStdio(), env: { SECRET_TOKEN: 'hush' } });
    await ctx.json('admin/addMcpServer', { name: 'keyed', url: 'https://93.184.215.14/mcp', headers: { 'X-Api-Key': 'sk-very-secret' } }, admin);
    const mine = await ctx.json('mcp/addServer', { name: 'mine', url: 'https://93.184.215.15/mcp', headers: { Authorization: 'Bearer mine' } }, ann);
    expect(mine.status).toBe(200);

    const annSees = (await ctx.json('mcp/listServers', {}, ann)).body.servers as any[];
    expect(annSees.map((s) => s.name).sort()).toEqual(['keyed', 'mine', 'shared']);
    const shared = annSees.find((s) => s.name === 'shared');
    expect(shared).toMatchObject({ shared: true, command: null, envNames: [] });
    expect(annSees.find((s) => s.name === 'keyed')).toMatchObject({ headerNames: ['X-Api-Key'] });
    expect(JSON.stringify(annSees)).not.toContain('sk-very-secret');
    expect((await ctx.json('mcp/listServers', {}, bob)).body.servers.map((s: any) => s.name).sort()).toEqual(['keyed', 'shared']);
    // A name the user already sees is taken.
    expect((await ctx.json('mcp/addServer', { name: 'shared', url: 'https://93.184.215.16/mcp' }, ann)).status).toBe(409);
    // The admin's list shows the command (the admin's own configuration), never the values.
    const adminSees = (await ctx.json('admin/listMcpServers', {}, admin)).body.servers as any[];
    expect(adminSees.find((s) => s.name === 'shared')).toMatchObject({ envNames: ['SECRET_TOKEN'], command: everythingStdio() });
    expect(JSON.stringify(adminSees)).not.toContain('hush');
  });

  test("one's own server turned off stays listed to its owner (enabled: false) and its tools leave the turn; an admin's turned off is not listed", async () => {
    const { ctx, admin, ann } = await setup();
    await ctx.json('admin/setMcpSettings', { userServers: true }, admin);
    const mine = (await ctx.json('mcp/addServer', { name: 'mine', url: 'https://93.184.215.15/mcp' }, ann)).body.server;
    const theirs = (await ctx.json('admin/addMcpServer', { name: 'keyed', url: 'https://93.184.215.14/mcp' }, admin)).body.server;
    expect((await ctx.json('mcp/updateServer', { id: mine.id, enabled: false, approval: 'ask' }, ann)).status).toBe(200);
    expect((await ctx.json('admin/updateMcpServer', { id: theirs.id, enabled: false }, admin)).status).toBe(200);
    const listed = (await ctx.json('mcp/listServers', {}, ann)).body.servers as any[];
    expect(listed.map((s) => [s.name, s.enabled, s.approval])).toEqual([['mine', false, 'ask']]);
    // The turn's tools come from the usable ones only: neither server is asked for its tools.
    const usable = await ctx.deps.store.read((tx) => listUsableMcpServers(tx, ann.user.id));
    expect(usable.map((s) => s.name)).toEqual([]);
    expect((await ctx.json('mcp/updateServer', { id: mine.id, enabled: true }, ann)).status).toBe(200);
    expect((await ctx.deps.store.read((tx) => listUsableMcpServers(tx, ann.user.id))).map((s) => s.name)).toEqual(['mine']);
  });

  test('a stdio server is never added through the API, even by an admin', async () => {
    const { ctx, admin } = await setup();
    const res = await ctx.json('admin/addMcpServer', { name: 'run', url: 'https://93.184.215.14/mcp', transport: 'stdio', command: ['sh', '-c', 'id'] } as any, admin);
    // The API's input has no transport or command: unknown fields are dropped, and what is added is remote.
    expect(res.status).toBe(200);
    expect(res.body.server).toMatchObject({ transport: 'http', command: null });
  });
});
