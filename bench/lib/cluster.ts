/**
 * Several instances of the compiled binary on one PostgreSQL, for bench/cluster.ts: each on a free
 * loopback port it keeps across restarts, its log (production level, request lines included) in
 * a file, its instance id read from its 'listening' line. Users and keys are made with the
 * binary's own CLI on the shared database. No load balancer: the bench picks the instance.
 */
import { SQL } from 'bun';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_ENV, createUserWithKey } from './parley';
import { freePort, spawnChild, stopChild, waitFor200 } from './proc';

/** Three binaries start at once on two shared cores and migrate an empty database. */
const START_TIMEOUT_MS = 60_000;

export interface Instance {
  /** 1, 2, 3… */
  index: number;
  url: string;
  pid: number;
  /** The id it holds leases under; new at every start. */
  id: string;
  proc: Bun.Subprocess;
  logFile: string;
}

export interface InstanceSet {
  instances: Instance[];
  /** The settings every instance runs with (and the CLI). */
  env: Record<string, string>;
  /** A user and an API key, made with the CLI on the shared database; returns the key. */
  createUser(email: string): string;
  /** SIGKILL an instance; resolves once it is gone, with when it was killed (ms since the epoch). */
  kill(index: number): Promise<number>;
  /** Start an instance again on its port (after a kill). */
  restart(index: number): Promise<Instance>;
  /** The log of every start of an instance so far. */
  log(index: number): string;
  stop(): Promise<void>;
}

/** A new empty database on the PostgreSQL server at `serverUrl`; its URL. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const sql = new SQL({ url: serverUrl, max: 1 });
  try {
    await sql.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await sql.close();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function startInstances(bin: string, dir: string, count: number, extraEnv: Record<string, string>): Promise<InstanceSet> {
  mkdirSync(dir, { recursive: true });
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...BENCH_ENV, PARLEY_PUSH_ENABLED: 'false', ...extraEnv };
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
  const starts = ports.map(() => 0);
  const instances: Instance[] = [];

  const spawn = async (index: number): Promise<Instance> => {
    const logFile = join(dir, `instance-${index}.${++starts[index - 1]!}.log`);
    const proc = spawnChild([bin, 'serve', '--host', '127.0.0.1', '--port', String(ports[index - 1]), '--data-dir', join(dir, `data-${index}`)], {
      env,
      stdout: 'ignore',
      stderr: Bun.file(logFile),
    });
    const url = `http://127.0.0.1:${ports[index - 1]}`;
    try {
      await waitFor200(`${url}/api/health`, START_TIMEOUT_MS, () => proc.exitCode === null);
    } catch (err) {
      proc.kill('SIGKILL');
      throw new Error(`instance ${index}: ${(err as Error).message}\n${read(logFile).slice(-2000)}`);
    }
    // The line is written just before the server answers; it may still be on its way to the file.
    let id: string | undefined;
    for (let waited = 0; !id && waited < 5000; waited += 20) {
      id = /"msg":"listening".*"instance":"([^"]+)"/.exec(read(logFile))?.[1];
      if (!id) await Bun.sleep(20);
    }
    if (!id) throw new Error(`instance ${index} started without a cluster bus (no instance id in its 'listening' line)`);
    const instance: Instance = { index, url, pid: proc.pid, id, proc, logFile };
    instances[index - 1] = instance;
    return instance;
  };

  const set: InstanceSet = {
    instances,
    env,
    createUser: (email) => createUserWithKey(bin, { ...env, PARLEY_DATA_DIR: join(dir, 'cli-data') }, email),
    async kill(index) {
      const { proc } = instances[index - 1]!;
      const at = Date.now();
      proc.kill('SIGKILL');
      await proc.exited;
      return at;
    },
    restart: (index) => spawn(index),
    log: (index) =>
      Array.from({ length: starts[index - 1]! }, (_, i) => read(join(dir, `instance-${index}.${i + 1}.log`))).join(''),
    async stop() {
      await Promise.all(instances.map((i) => i && stopChild(i.proc)));
    },
  };
  try {
    // All at once on the empty database: their migrations queue on the advisory lock.
    await Promise.all(ports.map((_, i) => spawn(i + 1)));
  } catch (err) {
    await set.stop();
    throw err;
  }
  return set;
}

function read(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
