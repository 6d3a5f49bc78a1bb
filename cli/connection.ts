import type { Command } from 'commander';
import { newId } from '../src/ids';
import { createConnections, type Connections } from '../src/connections/resolver';
import { addConnection, ConnectionRefusal, connectionView, listConnections, removeConnection, updateConnection, type ConnectionUpdate } from '../src/connections/connection.service';
import { connectionChecks, hostOf, testConnection } from '../src/connections/connection-health';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../src/config';
import type { Check } from '../src/ops/checks';
import { openConfiguredDatabase } from '../src/db/open-database';
import { createMemoryBus } from '../src/pubsub/bus';
import { DB_FILE, type Db } from '../src/db/connection';
import { Database } from 'bun:sqlite';
import { drizzle } from 'drizzle-orm/bun-sqlite';
import * as schema from '../src/db/schema';
import { sqliteStore } from '../src/db/store';
import type { Store } from '../src/db/work';
import { findConnection } from '../src/connections/connection.store';
import { KINDS, type ConnectionKind, type ConnectionOptions } from '../src/connections/connection-options';
import { rotateCredentials } from '../src/connections/rotate-key';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';

/**
 * Doctor's connection lines, read without writing: SQLite's file opened read-only (as doctor's
 * other checks do, so its files are left as they find them), PostgreSQL as configured. Undefined
 * when there is no database or no row yet (never served): doctor then probes the servers the
 * settings name, as before connections.
 */
export async function connectionLinesOf(config: Config): Promise<Check[] | undefined> {
  const file = join(config.dataDir, DB_FILE);
  if (!config.databaseUrl && !existsSync(file)) return undefined;
  let store: Store;
  let close: () => Promise<void> | void;
  try {
    if (config.databaseUrl) {
      const open = await openConfiguredDatabase(config, { migrations: 'refuse-pending', poolSize: 2 });
      ({ store, close } = open);
    } else {
      const sqlite = new Database(file, { readonly: true });
      store = sqliteStore(drizzle({ client: sqlite, schema }) as Db);
      close = () => sqlite.close();
    }
  } catch {
    return undefined;
  }
  try {
    const connections = createConnections({ config, store, bus: createMemoryBus(), now: Date.now, instanceId: newId(), seed: false });
    if (!(await connections.rows()).length) return undefined;
    return await connectionChecks(connections);
  } catch {
    // A database without the connections' tables yet (migrations pending): doctor's lines say so.
    return undefined;
  } finally {
    await close();
  }
}

async function open(opts: CommonOptions) {
  const { config, store, bus } = await openCliStore(opts);
  return { config, store, now: Date.now, connections: createConnections({ config, store, bus, now: Date.now, instanceId: newId() }) };
}

const refused = async <T>(fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (err) {
    throw err instanceof ConnectionRefusal ? new CliError(err.message) : err;
  }
};

/** `--option key=value`, repeated: numbers where they look like numbers. */
function optionsOf(pairs: string[] | undefined): ConnectionOptions | undefined {
  if (!pairs?.length) return undefined;
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 1) throw new CliError(`--option takes key=value, got "${pair}"`);
    const value = pair.slice(at + 1);
    out[pair.slice(0, at)] = /^\d+$/.test(value) ? Number(value) : value;
  }
  return out as ConnectionOptions;
}

const collect = (v: string, all: string[] = []) => [...all, v];

/** The credential from stdin (`-`), so it stays out of the shell's history and the process list. */
async function credentialOf(given: string | undefined): Promise<string | undefined> {
  if (given !== '-') return given;
  return (await Bun.stdin.text()).replace(/\r?\n$/, '');
}

type Line = ReturnType<typeof connectionView>;
const line = (c: Line) =>
  `${c.name.padEnd(16)} ${c.kind.padEnd(10)} ${c.api.padEnd(16)} ${hostOf(c.baseUrl).padEnd(28)} ${c.enabled ? 'enabled ' : 'disabled'} ${c.source}${c.hasCredential ? '  credential ********' : ''}`;

export function connectionCommands(program: Command) {
  const conn = (program.commands.find((c) => c.name() === 'connection') ?? program.command('connection')).description('outside services: AI servers, embeddings, images, speech, search (docs/connections.md)');

  common(conn.command('add'))
    .description('add a connection')
    .argument('[name]', 'lowercase letters, digits, hyphens: the prefix of its model ids (or --name)')
    .option('--name <name>', 'the same as the argument (the form `connection discover` prints)')
    .requiredOption('--kind <kind>', KINDS.join(' | '))
    .requiredOption('--base-url <url>', 'e.g. http://127.0.0.1:11434/v1, https://api.anthropic.com')
    .option('--api <api>', 'chat: openai-chat (default) | openai-responses | anthropic')
    .option('--credential <key>', 'API key; `-` reads it from standard input (keeps it out of the shell history)')
    .option('--option <key=value>', 'a kind option (model=…, researchModel=…, thinkingTokens=…); repeat', collect)
    .option('--disabled', 'add it switched off')
    .option('--no-private', 'refuse a base URL on this machine or the LAN')
    .action(
      runAction(async (given: string | undefined, opts: CommonOptions & { name?: string; kind: string; baseUrl: string; api?: string; credential?: string; option?: string[]; disabled?: boolean; private: boolean }) => {
        const name = given ?? opts.name;
        if (!name) throw new CliError('name the connection: parley connection add NAME … (or --name NAME)');
        if (!KINDS.includes(opts.kind as ConnectionKind)) throw new CliError(`--kind must be one of ${KINDS.join(', ')}`);
        const deps = await open(opts);
        const row = await refused(async () =>
          addConnection(deps, {
            name,
            kind: opts.kind as ConnectionKind,
            api: opts.api,
            baseUrl: opts.baseUrl,
            credential: await credentialOf(opts.credential),
            options: optionsOf(opts.option),
            enabled: !opts.disabled,
            allowPrivate: opts.private,
          }),
        );
        output(opts, connectionView(row, deps.connections), `added ${row.name} (${row.kind}, ${row.api})`);
      }),
    );

  common(conn.command('list'))
    .description('list the connections (credentials never shown)')
    .action(
      runAction(async (opts: CommonOptions) => {
        const deps = await open(opts);
        const rows = (await listConnections(deps)).map((r) => connectionView(r, deps.connections));
        output(opts, rows, rows.length ? rows.map(line).join('\n') : 'no connections');
      }),
    );

  common(conn.command('set'))
    .description("change a connection; the environment's take --enabled/--disabled only")
    .argument('<name>', 'its name or id')
    .option('--name <name>', 'rename it (its model ids change with it)')
    .option('--base-url <url>')
    .option('--api <api>')
    .option('--credential <key>', 'a new API key; `-` reads it from standard input; "" removes it')
    .option('--option <key=value>', 'merged into its options; repeat', collect)
    .option('--enabled')
    .option('--disabled')
    .action(
      runAction(async (ref: string, opts: CommonOptions & { name?: string; baseUrl?: string; api?: string; credential?: string; option?: string[]; enabled?: boolean; disabled?: boolean }) => {
        if (opts.enabled && opts.disabled) throw new CliError('--enabled or --disabled, not both');
        const deps = await open(opts);
        const change: ConnectionUpdate = { name: opts.name, baseUrl: opts.baseUrl, api: opts.api, options: optionsOf(opts.option) };
        const credential = await credentialOf(opts.credential);
        if (credential !== undefined) change.credential = credential === '' ? null : credential;
        if (opts.enabled || opts.disabled) change.enabled = !!opts.enabled;
        for (const k of Object.keys(change) as (keyof ConnectionUpdate)[]) if (change[k] === undefined) delete change[k];
        const row = await refused(() => updateConnection(deps, ref, change));
        output(opts, connectionView(row, deps.connections), `changed ${row.name}`);
      }),
    );

  common(conn.command('test'))
    .description('reach a connection now: latency, models, or what is wrong')
    .argument('<name>', 'its name or id')
    .action(
      runAction(async (ref: string, opts: CommonOptions) => {
        const deps = await open(opts);
        await deps.connections.ready();
        const row = await deps.store.read((tx) => findConnection(tx, ref));
        if (!row) throw new CliError(`no connection ${ref}`);
        const h = await testConnection(deps.connections, row);
        output(
          opts,
          { name: row.name, reachable: h.reachable, latencyMs: h.latencyMs, error: h.error ?? null, models: h.models ?? [] },
          h.error ? `${row.name}: ${h.error} (${h.latencyMs} ms)` : `${row.name}: reachable in ${h.latencyMs} ms${h.models ? `, ${h.models.length} models: ${h.models.slice(0, 10).join(', ')}` : ''}`,
        );
        if (h.error) process.exitCode = 1;
      }),
    );

  common(conn.command('remove'))
    .description('remove a connection and its model settings')
    .argument('<name>', 'its name or id')
    .action(
      runAction(async (ref: string, opts: CommonOptions) => {
        const deps = await open(opts);
        const row = await refused(() => removeConnection(deps, ref));
        output(opts, { removed: true, name: row.name }, `removed ${row.name}`);
      }),
    );

  common(conn.command('rotate-key'))
    .description('seal every credential with a new key (a new key file; with PARLEY_SECRET_KEY: the one set there)')
    .action(
      runAction(async (opts: CommonOptions) => {
        const deps = await open(opts);
        const result = await refused(() => rotateCredentials(deps));
        output(opts, result, `sealed ${result.resealed} credential(s) with key ${result.keyId}${result.newKeyFile ? ' (a new key file; the old key is kept in secret.key.previous until every instance has the new one)' : ''}`);
      }),
    );
}
