import type { Command } from 'commander';
import { newId } from '../src/ids';
import { createSealer } from '../src/connections/seal';
import { createMcp } from '../src/mcp/mcp';
import { checkMcpUrl } from '../src/mcp/mcp-check';
import { addMcpServer, findOwnMcpServer, listMcpServers, McpRefusal, mcpServerView, removeMcpServer, updateMcpServer, type McpServerUpdate, type McpServiceDeps } from '../src/mcp/mcp-server.service';
import { McpError } from '../src/mcp/mcp-errors';
import { writeMcpSettings } from '../src/mcp/mcp-settings';
import { createLogger } from '../src/log';
import { cliConfig, common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';

/**
 * `parley mcp`: the admin's MCP servers (docs/mcp.md). The only way to add a stdio server (a
 * program this machine runs, with the environment given here): the API takes remote ones only.
 * `check URL` runs Parley's MCP client against a URL without a database (the conformance suite's
 * adapter, and a quick look at what a server offers).
 */
const CLI = { kind: 'cli' } as const;

async function open(opts: CommonOptions): Promise<McpServiceDeps & { close(): Promise<void> }> {
  const { config, store } = await openCliStore(opts);
  const sealer = createSealer(config);
  const log = createLogger('warn');
  const mcp = createMcp({ config, store, sealer, log, now: Date.now, instanceId: newId() });
  return { config, store, now: Date.now, mcp, connections: { sealer }, close: () => mcp.close() };
}

/** Runs `fn` with the CLI's deps, closing the MCP connections it made (a stdio server's process) after. */
async function withDeps(opts: CommonOptions, fn: (deps: McpServiceDeps) => Promise<void>): Promise<void> {
  const deps = await open(opts);
  try {
    await fn(deps);
  } finally {
    await deps.close();
  }
}

const refused = async <T>(fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (err) {
    throw err instanceof McpRefusal || err instanceof McpError ? new CliError(err.message) : err;
  }
};

const collect = (v: string, all: string[] = []) => [...all, v];

/** `--header Name=value` / `--env NAME=value`, repeated; `-` as the value reads it from standard input. */
async function pairsOf(pairs: string[] | undefined, what: string): Promise<Record<string, string> | undefined> {
  if (!pairs?.length) return undefined;
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 1) throw new CliError(`--${what} takes NAME=value, got "${pair}"`);
    const value = pair.slice(at + 1);
    out[pair.slice(0, at)] = value === '-' ? (await Bun.stdin.text()).replace(/\r?\n$/, '') : value;
  }
  return out;
}

const secretOf = async (given: string | undefined) => (given === '-' ? (await Bun.stdin.text()).replace(/\r?\n$/, '') : given);

type View = Awaited<ReturnType<typeof mcpServerView>>;
const line = (s: View) =>
  `${s.name.padEnd(20)} ${s.transport.padEnd(6)} ${(s.url ?? s.command?.join(' ') ?? '').slice(0, 60).padEnd(60)} ${s.enabled ? 'enabled ' : 'disabled'} auth ${s.auth}${s.approval === 'ask' ? ', ask first' : ''}`;

interface ServerOpts extends CommonOptions {
  url?: string;
  command?: string;
  arg?: string[];
  header?: string[];
  env?: string[];
  auth?: 'none' | 'oauth';
  clientId?: string;
  clientSecret?: string;
  approval?: 'never' | 'ask';
  timeout?: string;
  enabled?: boolean;
  disabled?: boolean;
  name?: string;
}

const serverOptions = (cmd: Command) =>
  cmd
    .option('--url <url>', 'a remote server: its streamable HTTP (or older HTTP+SSE) endpoint')
    .option('--command <program>', 'a stdio server: the program to run (e.g. npx)')
    .option('--arg <arg>', "an argument of the stdio server's program; repeat, in order", collect)
    .option('--header <name=value>', 'a request header (an API key); `name=-` reads the value from standard input; repeat', collect)
    .option('--env <NAME=value>', "an environment variable of the stdio server (it gets no other but PATH, HOME and the like); `NAME=-` reads standard input; repeat", collect)
    .option('--auth <auth>', 'none | oauth (each user signs in to the server)')
    .option('--client-id <id>', 'a client registered with the server beforehand (servers without dynamic registration)')
    .option('--client-secret <secret>', "that client's secret; `-` reads it from standard input")
    .option('--approval <approval>', 'never | ask (each call waits for the user\'s approval)')
    .option('--timeout <seconds>', 'seconds a call may go without an answer or progress');

/** The fields `add` and `set` take alike. */
const fieldsOf = async (opts: ServerOpts) => ({
  url: opts.url,
  command: opts.command ? [opts.command, ...(opts.arg ?? [])] : undefined,
  headers: await pairsOf(opts.header, 'header'),
  env: await pairsOf(opts.env, 'env'),
  auth: opts.auth,
  oauthClientId: opts.clientId,
  oauthClientSecret: await secretOf(opts.clientSecret),
  approval: opts.approval,
  timeoutS: timeoutOf(opts.timeout),
});

const timeoutOf = (raw: string | undefined) => {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 3600) throw new CliError('--timeout takes whole seconds from 1 to 3600');
  return n;
};

export function mcpCommands(program: Command) {
  const mcp = program.command('mcp').description("MCP servers whose tools the model may call (docs/mcp.md)");

  serverOptions(common(mcp.command('add')))
    .description('add an MCP server for every user: --url for a remote one, --command (and --arg) for a stdio one')
    .argument('<name>', 'lowercase letters, digits, hyphens: the middle of its tools\' names')
    .option('--disabled', 'add it switched off')
    .action(
      runAction(async (name: string, opts: ServerOpts) => {
        if (!!opts.url === !!opts.command) throw new CliError('give --url (a remote server) or --command (a stdio server)');
        await withDeps(opts, async (deps) => {
          const row = await refused(async () =>
            addMcpServer(deps, CLI, {
              name,
              transport: opts.command ? 'stdio' : 'http',
              ...(await fieldsOf(opts)),
              enabled: !opts.disabled,
            }),
          );
          output(opts, await mcpServerView(deps, row, { admin: true }), `added ${row.name} (${row.transport})`);
        });
      }),
    );

  common(mcp.command('list'))
    .description("list the admin's MCP servers (header values and secrets never shown)")
    .action(
      runAction(async (opts: CommonOptions) => {
        await withDeps(opts, async (deps) => {
          const rows = await Promise.all((await listMcpServers(deps, CLI)).map((r) => mcpServerView(deps, r, { admin: true })));
          output(opts, rows, rows.length ? rows.map(line).join('\n') : 'no MCP servers');
        });
      }),
    );

  serverOptions(common(mcp.command('set')))
    .description('change an MCP server (fields not given stay)')
    .argument('<name>', 'its name or id')
    .option('--name <name>', 'rename it (its tools\' names change with it)')
    .option('--enabled')
    .option('--disabled')
    .option('--users <on|off>', "let users add their own remote servers (a setting, with no server name: `parley mcp set - --users on`)")
    .option('--users-private <on|off>', "let users' servers be on this machine or the LAN")
    .action(
      runAction(async (ref: string, opts: ServerOpts & { users?: string; usersPrivate?: string }) => {
        if (opts.enabled && opts.disabled) throw new CliError('--enabled or --disabled, not both');
        await withDeps(opts, async (deps) => {
          if (opts.users !== undefined || opts.usersPrivate !== undefined) {
            const flag = (v: string | undefined) => (v === undefined ? undefined : v === 'on' ? true : v === 'off' ? false : (() => { throw new CliError('--users and --users-private take on or off'); })());
            const settings = await writeMcpSettings(deps.store, { userServers: flag(opts.users), userServersAllowPrivate: flag(opts.usersPrivate) }, Date.now());
            if (ref === '-') return output(opts, settings, `users' own servers: ${settings.userServers ? 'on' : 'off'}, on local addresses: ${settings.userServersAllowPrivate ? 'on' : 'off'}`);
          }
          const change: McpServerUpdate = {
            name: opts.name,
            ...(await fieldsOf(opts)),
            enabled: opts.enabled || opts.disabled ? !!opts.enabled : undefined,
          };
          for (const k of Object.keys(change) as (keyof McpServerUpdate)[]) if (change[k] === undefined) delete change[k];
          const row = await refused(() => updateMcpServer(deps, CLI, ref, change));
          output(opts, await mcpServerView(deps, row, { admin: true }), `changed ${row.name}`);
        });
      }),
    );

  common(mcp.command('test'))
    .description('reach an MCP server now: protocol, transport, its tools, or what is wrong')
    .argument('<name>', 'its name or id')
    .action(
      runAction(async (ref: string, opts: CommonOptions) => {
        await withDeps(opts, async (deps) => {
          const row = await refused(() => findOwnMcpServer(deps, CLI, ref));
          // As nobody in particular: a server that wants each user's sign-in says so.
          const r = await deps.mcp.test(row, `cli-${newId()}`);
          output(
            opts,
            { name: row.name, ...r },
            r.ok ? `${row.name}: ${r.transport}, protocol ${r.protocolVersion}, ${r.latencyMs} ms, ${r.tools.length} tools: ${r.tools.map((t) => t.name).join(', ')}` : `${row.name}: ${r.error} (${r.latencyMs} ms)`,
          );
          if (!r.ok) process.exitCode = 1;
        });
      }),
    );

  common(mcp.command('remove'))
    .description('remove an MCP server and every user\'s sign-in to it')
    .argument('<name>', 'its name or id')
    .action(
      runAction(async (ref: string, opts: CommonOptions) => {
        await withDeps(opts, async (deps) => {
          const row = await refused(() => removeMcpServer(deps, CLI, ref));
          output(opts, { removed: true, name: row.name }, `removed ${row.name}`);
        });
      }),
    );

  common(mcp.command('check'))
    .description("run Parley's MCP client against a URL, without a database: connect, sign in if asked, list tools, call some")
    .argument('<url>', 'the server\'s endpoint')
    .option('--call <tool[=json]>', 'call a tool, with JSON arguments; repeat', collect)
    .option('--header <name=value>', 'a request header; repeat', collect)
    .option('--client-id <id>', 'a pre-registered OAuth client')
    .option('--client-secret <secret>', "that client's secret; `-` reads it from standard input")
    .option('--client-metadata-url <url>', "an https URL of the client's metadata document")
    .option('--timeout <seconds>', 'per request', '30')
    .action(
      runAction(async (url: string, opts: CommonOptions & { call?: string[]; header?: string[]; clientId?: string; clientSecret?: string; clientMetadataUrl?: string; timeout: string }) => {
        const config = cliConfig(opts);
        const calls = (opts.call ?? []).map((c) => {
          const at = c.indexOf('=');
          if (at < 0) return { name: c, args: {} };
          try {
            return { name: c.slice(0, at), args: JSON.parse(c.slice(at + 1)) as Record<string, unknown> };
          } catch {
            throw new CliError(`--call ${c.slice(0, at)}=… takes JSON arguments`);
          }
        });
        const result = await refused(async () =>
          checkMcpUrl(url, {
            calls,
            timeoutMs: (Number(opts.timeout) || 30) * 1000,
            maxBytes: config.mcpResultMaxBytes,
            headers: await pairsOf(opts.header, 'header'),
            clientId: opts.clientId,
            clientSecret: await secretOf(opts.clientSecret),
            clientMetadataUrl: opts.clientMetadataUrl,
            log: opts.json ? undefined : (l) => console.error(l),
          }),
        );
        output(opts, result, `${result.transport}, protocol ${result.protocolVersion}, ${result.tools.length} tools${result.signedIn ? ', signed in' : ''}`);
        if (result.calls.some((c) => c.isError)) process.exitCode = 1;
      }),
    );
}
