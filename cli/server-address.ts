import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../src/config';

/**
 * The address a link the CLI prints starts with (login links, setup links). A browser must be
 * able to open it, so it is, in order:
 * 1. `PARLEY_PUBLIC_URL`: where users reach Parley, proxy and all;
 * 2. the address the server running on this data directory listens on (`parley serve` records
 *    it in the data directory, port chosen by the system included);
 * 3. the listening address the settings give (`PARLEY_HOST`/`PARLEY_PORT`, from the environment or
 *    `--env-file`);
 * 4. else nothing is known: the default is assumed, and the admin is told so.
 */
export interface ServerAddress {
  base: string;
  source: 'PARLEY_PUBLIC_URL' | 'running server' | 'settings' | 'assumed';
  /** What the admin should know about it (printed on stderr), when anything. */
  note?: string;
}

/** What `parley serve` writes into the data directory while it runs (removed when it stops). */
const LISTENING_FILE = 'listening.json';

interface Listening {
  url: string;
  pid: number;
  host: string;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

/** A host as a URL spells it (IPv6 in brackets). */
const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** The URL a browser on this machine opens for a server bound to `host`: "every interface" is no address, loopback is. */
export function openableBase(host: string, port: number): string {
  const h = WILDCARDS.has(host) ? (host === '::' ? '::1' : '127.0.0.1') : host;
  return `http://${urlHost(h)}:${port}`;
}

/**
 * For a server bound to every interface, the addresses other machines may reach it at (this
 * machine's non-loopback IPv4 addresses): a headless board is set up from a laptop.
 */
export function networkBases(host: string, port: number): string[] {
  if (!WILDCARDS.has(host)) return [];
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && a.family === 'IPv4' && !a.internal)
    .map((a) => `http://${a!.address}:${port}`);
}

/** Record the running server's address; returns what removes the record (at shutdown). */
export function recordListening(dataDir: string, url: string): () => void {
  const file = join(dataDir, LISTENING_FILE);
  const mine: Listening = { url, pid: process.pid, host: hostname() };
  try {
    writeFileSync(file, JSON.stringify(mine) + '\n', { mode: 0o600 });
  } catch {
    return () => {}; // a read-only data directory: links fall back on the settings
  }
  return () => {
    // Only our own record: another server may have started on this directory since.
    if (readListening(dataDir)?.pid === process.pid) rmSync(file, { force: true });
  };
}

function readListening(dataDir: string): Listening | undefined {
  try {
    const rec = JSON.parse(readFileSync(join(dataDir, LISTENING_FILE), 'utf8')) as Listening;
    return typeof rec.url === 'string' && Number.isInteger(rec.pid) ? rec : undefined;
  } catch {
    return undefined;
  }
}

/** The record of a server that is still running on this machine (a SIGKILLed one leaves its record behind). */
function runningServer(dataDir: string): Listening | undefined {
  const rec = readListening(dataDir);
  if (!rec || rec.host !== hostname()) return undefined;
  try {
    process.kill(rec.pid, 0);
    return rec;
  } catch (err) {
    // EPERM: alive, run by another user (the service's), which is the usual case.
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? rec : undefined;
  }
}

const SET_PUBLIC_URL = 'set PARLEY_PUBLIC_URL if browsers reach Parley at another address';

/** Where links should point (see ServerAddress); `env` is what the settings were read from. */
export function serverAddress(config: Config, env: Record<string, string | undefined>): ServerAddress {
  if (config.publicUrl) return { base: config.publicUrl, source: 'PARLEY_PUBLIC_URL' };
  const running = runningServer(config.dataDir);
  if (running) {
    const url = new URL(running.url);
    const base = openableBase(url.hostname.replace(/^\[|\]$/g, ''), Number(url.port));
    return { base, source: 'running server', note: `PARLEY_PUBLIC_URL is not set: the link uses the address the server running on ${config.dataDir} listens on (${base}); ${SET_PUBLIC_URL}` };
  }
  const base = openableBase(config.host, config.port);
  const wildcard = WILDCARDS.has(config.host) ? ` (it listens on every interface: from another machine, use this machine's address instead of ${new URL(base).hostname})` : '';
  if (env.PARLEY_HOST || env.PARLEY_PORT)
    return { base, source: 'settings', note: `PARLEY_PUBLIC_URL is not set and no server is running on ${config.dataDir}: the link uses the listening address of the settings, ${base}${wildcard}; ${SET_PUBLIC_URL}` };
  return {
    base,
    source: 'assumed',
    note: `the server's address is not known (PARLEY_PUBLIC_URL is not set, no server is running on ${config.dataDir}, and the settings name no PARLEY_HOST or PARLEY_PORT): assuming ${base}. Set PARLEY_PUBLIC_URL, or give the service's settings with --env-file`,
  };
}
