import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError } from '../http/errors';
import type { AppDeps } from '../deps';
import type { McpServerRow } from '../db/schema';
import { addMcpServer, findOwnMcpServer, listMcpServers, McpRefusal, mcpServerView, removeMcpServer, updateMcpServer, type McpActor } from './mcp-server.service';
import { readMcpSettings, writeMcpSettings } from './mcp-settings';
import { findMcpServer, listUserMcpTokens, listVisibleMcpServers } from './mcp-server.store';
import { McpError } from './mcp-errors';

// MCP servers (docs/mcp.md): the admin's (`admin/*`) and, when the admin allows it, users' own
// (`mcp/*`); thin handlers over the rules `parley mcp` shares (mcp-server.service.ts).

const ADMIN_ONLY = 'Admins only: any other caller is answered 403. Header values and secrets are never returned (their names are).';

/** The shared rules refuse in words; the API answers those words with their status. */
async function refused<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof McpError) throw new AppError('BAD_REQUEST', { message: err.message });
    if (!(err instanceof McpRefusal)) throw err;
    const code = ({ 403: 'FORBIDDEN', 404: 'NOT_FOUND', 409: 'CONFLICT', 400: 'BAD_REQUEST' } as const)[err.status];
    // The spec's 403 keeps its fixed message: the sentence goes in `data.detail`.
    throw new AppError(code, { message: err.message, ...(err.status === 403 ? { data: { detail: err.message } } : {}) });
  }
}

const Ref = t.String({ minLength: 1, maxLength: 100, description: "The server's id or name." });
const Name = t.String({ minLength: 1, maxLength: 30, description: 'Lowercase letters, digits and hyphens: the middle of its tools\' names (`mcp__<name>__<tool>`).' });
const Url = t.String({ minLength: 1, maxLength: 2000 });
const Pairs = t.Record(t.String({ maxLength: 100 }), t.String({ maxLength: 8192 }), { description: 'Header names and values (an API key), sealed at rest; `null` in an update removes them all.' });
const Auth = t.Union([t.Literal('none'), t.Literal('oauth')], { description: '`oauth`: each user signs in to the server (OAuth 2.1) before its tools are offered to them.' });
const Approval = t.Union([t.Literal('never'), t.Literal('ask')], { description: '`ask`: every call of its tools waits for the user\'s approval.' });
const TimeoutS = t.Union([t.Integer({ minimum: 1, maximum: 3600 }), t.Null()], { description: 'Seconds a call may go without an answer or progress; null: PARLEY_MCP_CALL_TIMEOUT_S.' });
const Timestamp = t.String({ format: 'date-time' });

const Health = t.Object({
  ok: t.Boolean(),
  error: t.Union([t.String(), t.Null()]),
  protocolVersion: t.Union([t.String(), t.Null()]),
  transport: t.Union([t.String(), t.Null()], { description: '`streamable-http`, `sse` or `stdio`.' }),
  tools: t.Union([t.Integer(), t.Null()]),
  checkedAt: Timestamp,
});
const ServerFields = {
  id: t.String(),
  name: t.String(),
  transport: t.Union([t.Literal('http'), t.Literal('stdio')]),
  url: t.Union([t.String(), t.Null()]),
  command: t.Union([t.Array(t.String()), t.Null()], { description: 'A stdio server\'s program and arguments (admins only).' }),
  headerNames: t.Array(t.String()),
  envNames: t.Array(t.String()),
  auth: Auth,
  oauthClientId: t.Union([t.String(), t.Null()]),
  hasOauthClientSecret: t.Boolean(),
  approval: Approval,
  timeoutS: t.Union([t.Integer(), t.Null()]),
  enabled: t.Boolean(),
  shared: t.Boolean({ description: "The admin's, offered to every user." }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  health: t.Union([Health, t.Null()], { description: 'The last contact with it on this instance, null before any.' }),
  breakerOpenUntil: t.Union([Timestamp, t.Null()], { description: 'Set while the server failed too often and is left alone.' }),
};
const ServerSchema = t.Object(ServerFields);
const Settings = t.Object({
  userServers: t.Boolean({ description: 'Users may add their own remote MCP servers.' }),
  userServersAllowPrivate: t.Boolean({ description: 'Users\' servers may be on this machine or the LAN.' }),
});
const TestResult = t.Object({
  ok: t.Boolean(),
  latencyMs: t.Integer(),
  error: t.Union([t.String(), t.Null()]),
  needsSignIn: t.Boolean({ description: 'The server wants the caller to connect (sign in) first: `mcp/connectServer`.' }),
  protocolVersion: t.Union([t.String(), t.Null()]),
  transport: t.Union([t.String(), t.Null()]),
  serverInfo: t.Union([t.Object({ name: t.String(), version: t.String() }), t.Null()]),
  tools: t.Array(t.Object({ name: t.String(), description: t.String() })),
});
const Fields = {
  url: t.Optional(Url),
  headers: t.Optional(Pairs),
  auth: t.Optional(Auth),
  oauthClientId: t.Optional(t.Union([t.String({ maxLength: 500 }), t.Null()], { description: 'A client the admin registered with the server beforehand (for servers without dynamic registration).' })),
  oauthClientSecret: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()], { description: "That client's secret, sealed at rest." })),
  approval: t.Optional(Approval),
  timeoutS: t.Optional(TimeoutS),
  enabled: t.Optional(t.Boolean()),
};
const UpdateFields = { ...Fields, name: t.Optional(Name), headers: t.Optional(t.Union([Pairs, t.Null()])) };

const ADMIN: McpActor = { kind: 'admin' };
const userActor = (userId: string): McpActor => ({ kind: 'user', userId });
const views = (deps: AppDeps, rows: McpServerRow[], admin: boolean) => Promise.all(rows.map((r) => mcpServerView(deps, r, { admin })));

/** A server the caller may use: the admin's (enabled) or their own. Unknown: 404; another user's: 403. */
async function usableServer(deps: AppDeps, userId: string, id: string): Promise<McpServerRow> {
  const row = await deps.store.read((tx) => findMcpServer(tx, id));
  if (!row || (row.ownerId === null && !row.enabled)) throw new AppError('NOT_FOUND', { message: `No MCP server ${id}.` });
  if (row.ownerId !== null && row.ownerId !== userId) throw new AppError('FORBIDDEN', { message: 'This MCP server is another user\'s.' });
  return row;
}

export const mcpOperations = [
  defineOperation({
    path: 'admin/listMcpServers',
    admin: true,
    summary: "The admin's MCP servers, with their last health, and the settings for users' own",
    description: ADMIN_ONLY,
    input: t.Object({}),
    output: t.Object({ servers: t.Array(ServerSchema), settings: Settings }),
    errors: [403],
    handler: async ({ deps }) => ({ servers: await views(deps, await listMcpServers(deps, ADMIN), true), settings: await readMcpSettings(deps.store) }),
  }),
  defineOperation({
    path: 'admin/addMcpServer',
    admin: true,
    summary: 'Add a remote MCP server for every user (streamable HTTP, or HTTP+SSE for older servers)',
    description: `${ADMIN_ONLY} A stdio server (a program on this machine) is added with \`parley mcp add\` on the server itself, never through the API: 400. A name taken: 409.`,
    input: t.Object({ name: Name, ...Fields, url: Url }),
    output: t.Object({ server: ServerSchema }),
    errors: [403, 409],
    handler: async ({ input, deps }) => ({ server: await mcpServerView(deps, await refused(() => addMcpServer(deps, ADMIN, input)), { admin: true }) }),
  }),
  defineOperation({
    path: 'admin/updateMcpServer',
    admin: true,
    summary: "Change one of the admin's MCP servers (its connections close and reopen on next use)",
    description: `${ADMIN_ONLY} Fields left out stay. A stdio server's command and environment are set with \`parley mcp set\` only. Unknown: 404; a name taken: 409.`,
    input: t.Object({ id: Ref, ...UpdateFields }),
    output: t.Object({ server: ServerSchema }),
    errors: [403, 404, 409],
    handler: async ({ input, deps }) => {
      const { id, ...change } = input;
      return { server: await mcpServerView(deps, await refused(() => updateMcpServer(deps, ADMIN, id, change)), { admin: true }) };
    },
  }),
  defineOperation({
    path: 'admin/removeMcpServer',
    admin: true,
    summary: "Remove one of the admin's MCP servers and every user's sign-in to it",
    description: `${ADMIN_ONLY} Unknown: 404.`,
    input: t.Object({ id: Ref }),
    output: t.Object({ removed: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, deps }) => {
      await refused(() => removeMcpServer(deps, ADMIN, input.id));
      return { removed: true };
    },
  }),
  defineOperation({
    path: 'admin/testMcpServer',
    admin: true,
    summary: 'Reach an MCP server now, as the calling admin: protocol, transport, its tools, or the problem in words',
    description: `${ADMIN_ONLY} 200 whatever the server says; \`error\` names the problem. A server that wants a sign-in says so (\`needsSignIn\`): connect it as a user first. Unknown: 404.`,
    input: t.Object({ id: Ref }),
    output: TestResult,
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const row = await refused(() => findOwnMcpServer(deps, ADMIN, input.id));
      return deps.mcp.test(row, user.id);
    },
  }),
  defineOperation({
    path: 'admin/setMcpSettings',
    admin: true,
    summary: 'Whether users may add their own remote MCP servers, and whether those may be on local addresses',
    description: `${ADMIN_ONLY} Fields left out stay.`,
    input: t.Object({ userServers: t.Optional(t.Boolean()), userServersAllowPrivate: t.Optional(t.Boolean()) }),
    output: t.Object({ settings: Settings }),
    errors: [403],
    handler: async ({ input, deps }) => ({ settings: await writeMcpSettings(deps.store, input, deps.now()) }),
  }),
  defineOperation({
    path: 'mcp/listServers',
    summary: "The MCP servers the caller may use: the admin's and their own, whether they are connected (signed in)",
    description: "The admin's enabled servers and all of the caller's own (`enabled: false`: turned off, its tools not offered). `userServers`: whether the caller may add their own (`mcp/addServer`).",
    input: t.Object({}),
    output: t.Object({
      servers: t.Array(t.Object({ ...ServerFields, connected: t.Boolean({ description: 'For `auth: oauth` servers: the caller has signed in.' }) })),
      userServers: t.Boolean(),
    }),
    handler: async ({ user, deps }) => {
      const [rows, tokens, settings] = await Promise.all([
        deps.store.read((tx) => listVisibleMcpServers(tx, user.id)),
        deps.store.read((tx) => listUserMcpTokens(tx, user.id)),
        readMcpSettings(deps.store),
      ]);
      const signedIn = new Set(tokens.filter((k) => k.tokens).map((k) => k.serverId));
      const servers = await Promise.all(rows.map(async (r) => ({ ...(await mcpServerView(deps, r, { admin: false })), connected: signedIn.has(r.id) })));
      return { servers, userServers: settings.userServers };
    },
  }),
  defineOperation({
    path: 'mcp/addServer',
    summary: 'Add a remote MCP server of the caller\'s own (when the admin allows it)',
    description:
      "403 when the admin does not let users add servers. The address must be public unless the admin allows local ones (400 saying so); a name the caller already sees: 409; more than PARLEY_MCP_SERVERS_MAX_PER_USER: 409.",
    input: t.Object({ name: Name, url: Url, headers: t.Optional(Pairs), auth: t.Optional(Auth), approval: t.Optional(Approval), timeoutS: t.Optional(TimeoutS), enabled: t.Optional(t.Boolean()) }),
    output: t.Object({ server: ServerSchema }),
    errors: [403, 409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => ({ server: await mcpServerView(deps, await refused(() => addMcpServer(deps, userActor(user.id), input)), { admin: false }) }),
  }),
  defineOperation({
    path: 'mcp/updateServer',
    summary: "Change one of the caller's own MCP servers",
    description: 'Fields left out stay. Not the caller\'s (or unknown): 404; users\' servers not allowed any more: 403.',
    input: t.Object({ id: Ref, name: t.Optional(Name), url: t.Optional(Url), headers: t.Optional(t.Union([Pairs, t.Null()])), auth: t.Optional(Auth), approval: t.Optional(Approval), timeoutS: t.Optional(TimeoutS), enabled: t.Optional(t.Boolean()) }),
    output: t.Object({ server: ServerSchema }),
    errors: [403, 404, 409],
    handler: async ({ input, user, deps }) => {
      const { id, ...change } = input;
      return { server: await mcpServerView(deps, await refused(() => updateMcpServer(deps, userActor(user.id), id, change)), { admin: false }) };
    },
  }),
  defineOperation({
    path: 'mcp/removeServer',
    summary: "Remove one of the caller's own MCP servers",
    description: 'Not the caller\'s (or unknown): 404.',
    input: t.Object({ id: Ref }),
    output: t.Object({ removed: t.Boolean() }),
    errors: [404],
    handler: async ({ input, user, deps }) => {
      await refused(() => removeMcpServer(deps, userActor(user.id), input.id));
      return { removed: true };
    },
  }),
  defineOperation({
    path: 'mcp/testServer',
    summary: 'Reach an MCP server the caller may use, as the caller: its tools, or the problem in words',
    description: '200 whatever the server says. Unknown: 404; another user\'s: 403.',
    input: t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) }),
    output: TestResult,
    errors: [403, 404],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => deps.mcp.test(await usableServer(deps, user.id, input.id), user.id),
  }),
  defineOperation({
    path: 'mcp/connectServer',
    summary: 'Start signing in to an MCP server (OAuth 2.1): the URL to open in the browser',
    description:
      'The browser comes back to `/api/mcp/oauth/callback`, which keeps the tokens (sealed) and goes on to the web app\'s settings. A server without sign-in (`auth: none`), or one whose sign-in Parley cannot use: 400 saying why. Unknown: 404; another user\'s: 403.',
    input: t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) }),
    output: t.Object({ authorizationUrl: t.String() }),
    errors: [403, 404],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const row = await usableServer(deps, user.id, input.id);
      if (row.auth !== 'oauth' || !row.url) throw new AppError('BAD_REQUEST', { message: `The MCP server ${row.name} needs no sign-in.` });
      return { authorizationUrl: await refused(() => deps.mcp.tokens.start(row, user.id)) };
    },
  }),
  defineOperation({
    path: 'mcp/disconnectServer',
    summary: "Forget the caller's sign-in to an MCP server",
    description: 'Its tools are no longer offered to the caller until they connect again. Unknown: 404; another user\'s: 403.',
    input: t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const row = await usableServer(deps, user.id, input.id);
      await deps.mcp.tokens.disconnect(row.id, user.id);
      await deps.mcp.pool.closeServer(row.id, user.id);
      return { success: true };
    },
  }),
];
