/**
 * A Parley cluster on one machine for scripts/cluster/cluster.test.ts: a throwaway PostgreSQL
 * (test/support/postgres.ts), optionally a Redis for the cluster bus (test/support/redis.ts), the
 * fake AI server (test/fakes/openai.ts), three instances of the compiled binary on free loopback
 * ports sharing the database, and Debian's nginx in front of them: an upstream of the three,
 * round-robin, no sticky sessions, set up for server-sent events as docs/self-hosting.md says.
 * Everything listens on 127.0.0.1 only and lives in the run's temporary directory. The calls and
 * the stream recorder the scenarios use are in client.ts.
 */
import { SQL } from 'bun';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '../../test/support/postgres';
import { startRedis, type TestRedis } from '../../test/support/redis';
import { freePort } from '../../test/support/free-port';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/fakes/openai';

export type BusKind = 'postgres' | 'redis';

/** The instances' shared sealing key (32 bytes in base64). */
const CLUSTER_SECRET_KEY = Buffer.alloc(32, 9).toString('base64');
export type Provider = 'openai-responses' | 'openai-chat';

/** Generous: three binaries start at once on two shared cores, and migrate an empty database. */
const START_TIMEOUT_MS = 60_000;

export interface Instance {
  /** 1, 2 or 3, as the scenarios name them. */
  index: number;
  port: number;
  url: string;
  /** The id it holds leases under (the `instance` of its 'listening' log line); new at every start. */
  id: string;
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  /** What it printed since it last started (stdout and its JSON log lines on stderr). */
  output(): string;
}

export interface User {
  email: string;
  key: string;
  keyId: string;
}

export interface Cluster {
  bus: BusKind;
  provider: Provider;
  binary: string;
  pg: TestPostgres;
  redis?: TestRedis;
  /** A client of the shared database, to check what the instances wrote. */
  sql: SQL;
  fake: FakeOpenAI;
  instances: Instance[];
  /** nginx in front of the three. */
  proxy: { url: string; errorLog(): string };
  /** A user and an API key, made with the binary's own CLI on the shared database. */
  createUser(name: string): User;
  /** SIGKILL an instance; resolves once it is gone. Returns when it was killed (ms since epoch). */
  kill(index: number): Promise<number>;
  /** Start an instance again on its port (after a kill, or SIGTERM first when it runs), with settings changed by `env`. */
  restart(index: number, env?: Record<string, string>): Promise<Instance>;
  /** Restart all three with another AI provider (one after another: the cluster keeps serving). */
  useProvider(provider: Provider): Promise<void>;
  /** The instance holding a lease now, or undefined. */
  leaseHolder(name: string): Promise<Instance | undefined>;
  /** Which instance (by id, of this or an earlier start) a log line named: for the report. */
  describe(instanceId: string | undefined): string;
  /** The last lines of every instance's output and nginx's error log: printed when a scenario fails. */
  recentOutput(lines?: number): string;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  binary: string;
  bus: BusKind;
  provider: Provider;
  /** Settings every instance gets on top of the harness's own. */
  env?: Record<string, string>;
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-cluster-'));
  const stoppers: (() => Promise<void> | void)[] = [];
  // An interrupted run (Ctrl-C, a CI timeout's SIGTERM) must not leave servers behind: these end
  // everything at once, synchronously, when the process exits before `stop`.
  const killers: (() => void)[] = [];
  const killAll = () => {
    for (const kill of killers.splice(0).reverse()) {
      try {
        kill();
      } catch {
        // the next one still runs
      }
    }
  };
  const onSignal = () => {
    killAll();
    process.exit(130);
  };
  process.on('exit', killAll);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const stopAll = async () => {
    for (const stop of stoppers.reverse()) await Promise.resolve(stop()).catch(() => undefined);
    killers.length = 0;
    process.off('exit', killAll);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  try {
    const [pg, redis] = await Promise.all([startPostgres(), opts.bus === 'redis' ? startRedis() : undefined]);
    stoppers.push(() => pg.stop());
    // Both stop synchronously up to their first await: the server is told to stop, or killed.
    killers.push(() => void pg.stop());
    if (redis) {
      stoppers.push(() => redis.stop());
      killers.push(() => void redis.stop());
    }
    const fake = startFakeOpenAI();
    stoppers.push(() => fake.stop());
    const sql = new SQL({ url: pg.url, max: 4 });
    stoppers.push(() => sql.close());

    let provider = opts.provider;
    const baseEnv = (): Record<string, string> => ({
      PATH: process.env.PATH ?? '',
      PARLEY_DATABASE_URL: pg.url,
      ...(redis ? { PARLEY_REDIS_URL: redis.url } : {}),
      PARLEY_LOG_LEVEL: 'info',
      PARLEY_PUSH_ENABLED: 'false',
      PARLEY_AI_PROVIDER: provider,
      PARLEY_AI_BASE_URL: fake.url,
      PARLEY_AI_API_KEY: 'fake',
      PARLEY_AI_MODEL: 'fake-model',
      PARLEY_RESEARCH_MODEL: 'fake-model',
      // Each instance has a data directory of its own: the connections' credentials need one key on all (docs/connections.md).
      PARLEY_SECRET_KEY: CLUSTER_SECRET_KEY,
      // Three instances, each with its own pool, the LISTEN connection and the CLI: within the test server's 50.
      PARLEY_DATABASE_POOL: '8',
      ...opts.env,
    });
    const cli = (args: string[]) => {
      const p = Bun.spawnSync([opts.binary, ...args, '--data-dir', join(dir, 'cli-data')], { env: baseEnv(), stdout: 'pipe', stderr: 'pipe' });
      if (p.exitCode !== 0) throw new Error(`parley ${args.join(' ')} failed (${p.exitCode}): ${p.stderr.toString()}`);
      return p.stdout.toString();
    };

    const ports = await Promise.all([1, 2, 3].map(() => freePort()));
    const everyId = new Map<string, number>();
    const instances: Instance[] = [];
    const spawn = async (index: number, env: Record<string, string> = {}): Promise<Instance> => {
      const port = ports[index - 1]!;
      const dataDir = join(dir, `instance-${index}`);
      const logFile = join(dir, `instance-${index}.log`);
      const proc = Bun.spawn([opts.binary, 'serve', '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir], {
        env: { ...baseEnv(), ...env },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const output = capture(proc, logFile);
      const started = await waitForStart(proc, output, START_TIMEOUT_MS).catch((err) => {
        proc.kill('SIGKILL');
        throw new Error(`instance ${index}: ${(err as Error).message}`);
      });
      everyId.set(started.id, index);
      const instance: Instance = { index, port, url: started.url, id: started.id, proc, output };
      instances[index - 1] = instance;
      return instance;
    };
    killers.push(() => instances.forEach((i) => i?.proc.kill('SIGKILL')));
    stoppers.push(async () => {
      for (const i of instances) i?.proc.kill('SIGKILL');
      await Promise.all(instances.map((i) => i?.proc.exited));
    });
    // All three at once on the empty database: their migrations queue on the advisory lock.
    await Promise.all([1, 2, 3].map((i) => spawn(i)));

    const nginx = await startNginx(join(dir, 'nginx'), ports);
    stoppers.push(nginx.stop);
    killers.push(nginx.kill);

    const cluster: Cluster = {
      bus: opts.bus,
      get provider() {
        return provider;
      },
      binary: opts.binary,
      pg,
      redis,
      sql,
      fake,
      instances,
      proxy: { url: nginx.url, errorLog: nginx.errorLog },
      createUser(name) {
        const email = `${name}@cluster.test`;
        cli(['user', 'create', '--email', email, '--name', name]);
        const made = JSON.parse(cli(['apikey', 'create', '--email', email, '--json']));
        return { email, key: made.key, keyId: made.keyId };
      },
      async kill(index) {
        const i = instances[index - 1]!;
        const at = Date.now();
        i.proc.kill('SIGKILL');
        await i.proc.exited;
        return at;
      },
      async restart(index, env) {
        const i = instances[index - 1]!;
        if (i.proc.exitCode === null && i.proc.signalCode === null) {
          i.proc.kill('SIGTERM');
          await i.proc.exited;
        }
        return spawn(index, env);
      },
      async useProvider(next) {
        provider = next;
        for (const i of [1, 2, 3]) await cluster.restart(i);
      },
      async leaseHolder(name) {
        const rows = await sql`SELECT holder FROM leases WHERE name = ${name}`;
        const holder = rows[0]?.holder as string | undefined;
        return instances.find((i) => i.id === holder);
      },
      describe(id) {
        if (!id) return 'nobody';
        const index = everyId.get(id);
        if (index === undefined) return `an unknown instance (${id})`;
        return instances[index - 1]?.id === id ? `instance ${index}` : `instance ${index}, before its restart`;
      },
      recentOutput(lines = 25) {
        const tail = (text: string) => text.trimEnd().split('\n').slice(-lines).join('\n');
        return [
          ...instances.map((i) => `--- instance ${i.index} (${i.url}, id ${i.id}) ---\n${tail(i.output())}`),
          `--- nginx error log ---\n${tail(nginx.errorLog())}`,
        ].join('\n');
      },
      stop: stopAll,
    };
    return cluster;
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** Everything a process writes, kept in memory and appended to `file` (left in the run's temporary directory). */
function capture(proc: { stdout: ReadableStream<Uint8Array>; stderr: ReadableStream<Uint8Array> }, file: string): () => string {
  let seen = '';
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      seen += text;
      appendFileSync(file, text);
    }
  };
  void collect(proc.stdout).catch(() => undefined);
  void collect(proc.stderr).catch(() => undefined);
  return () => seen;
}

/** The URL from "listening on" (stdout) and the instance id from the 'listening' log line (stderr). */
async function waitForStart(proc: Bun.Subprocess, output: () => string, timeoutMs: number): Promise<{ url: string; id: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = output();
    const url = /listening on (http:\/\/\S+)/.exec(text)?.[1];
    const id = /"msg":"listening".*"instance":"([^"]+)"/.exec(text)?.[1];
    if (url && id) return { url, id };
    if (url && !id && /"msg":"listening"/.test(text)) throw new Error(`started without a cluster bus (no instance id in its 'listening' line): ${text}`);
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`exited before listening: ${text}`);
    if (Date.now() > deadline) throw new Error(`not listening within ${timeoutMs} ms: ${text}`);
    await Bun.sleep(50);
  }
}

/**
 * nginx as a child process (never a daemon), its configuration, pid, logs and temporary files in
 * `dir`, listening on a free loopback port. The proxy settings are docs/self-hosting.md's, with an
 * upstream of the instances instead of one address.
 */
async function startNginx(dir: string, ports: number[]): Promise<{ url: string; errorLog(): string; stop(): Promise<void>; kill(): void }> {
  const nginxBin = Bun.which('nginx') ?? Bun.which('nginx', { PATH: '/usr/sbin:/usr/local/sbin' });
  if (!nginxBin) throw new Error("no nginx: install Debian's nginx (apt-get install nginx), as scripts/cluster/run.sh does when run as root");
  mkdirSync(join(dir, 'temp'), { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  const errorLog = join(dir, 'error.log');
  writeFileSync(
    conf,
    `# Generated by scripts/cluster/harness.ts for one run.
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${errorLog} warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path ${join(dir, 'temp', 'body')};
    proxy_temp_path ${join(dir, 'temp', 'proxy')};
    fastcgi_temp_path ${join(dir, 'temp', 'fastcgi')};
    uwsgi_temp_path ${join(dir, 'temp', 'uwsgi')};
    scgi_temp_path ${join(dir, 'temp', 'scgi')};
    client_max_body_size 32m;
    # Bodies stay in memory: under root the workers run as nobody, who cannot reach the run's
    # private temporary directory.
    client_body_buffer_size 1m;

    # Round-robin over the instances, no sticky sessions: any instance serves any request.
    upstream parley {
${ports.map((p) => `        server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join('\n')}
        keepalive 16;
    }

    server {
        listen 127.0.0.1:${port};
        location / {
            proxy_pass http://parley;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header Connection "";
            # Server-sent events: no buffering, no caching, long reads.
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            # A dead instance refuses the connection: the request goes to the next one.
            proxy_next_upstream error timeout;
            proxy_connect_timeout 2s;
        }
    }
}
`,
  );
  const proc = Bun.spawn([nginxBin, '-p', dir, '-c', conf, '-e', errorLog, '-g', 'daemon off;'], { stdout: 'pipe', stderr: 'pipe' });
  const output = capture(proc, join(dir, 'nginx.out'));
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      const socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } });
      socket.end();
      break;
    } catch {
      if (proc.exitCode !== null || Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`nginx did not start: ${output()}${readLog(errorLog)}`);
      }
      await Bun.sleep(50);
    }
  }
  return {
    url: `http://127.0.0.1:${port}`,
    errorLog: () => readLog(errorLog),
    // SIGTERM: the master takes its worker with it (a SIGKILLed master would leave the worker running).
    kill: () => proc.kill('SIGTERM'),
    async stop() {
      proc.kill('SIGTERM');
      await Promise.race([proc.exited, Bun.sleep(3000)]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    },
  };
}

const readLog = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};
