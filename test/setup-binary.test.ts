import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from './build-binary';
import { sqliteOnly } from './helpers';

// Processes on a shared machine; nothing here asserts on time.
setDefaultTimeout(180_000);

async function run(bin: string, args: string[], env: Record<string, string>) {
  const p = Bun.spawn([bin, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out: out.trim(), err, code };
}

/** `parley serve --port 0`, with what it printed so far readable until a pattern shows. */
function serve(bin: string, env: Record<string, string>, args: string[] = ['--port', '0']) {
  const proc = Bun.spawn([bin, 'serve', ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
  const reader = proc.stdout.getReader();
  let seen = '';
  const until = async (pattern: RegExp): Promise<RegExpExecArray> => {
    for (;;) {
      const m = pattern.exec(seen);
      if (m) return m;
      const { value, done } = await reader.read();
      if (done) throw new Error(`serve ended without printing ${pattern}: ${seen}`);
      seen += new TextDecoder().decode(value);
    }
  };
  const stop = async () => {
    proc.kill('SIGTERM');
    await proc.exited;
    for (let r = await reader.read(); !r.done; r = await reader.read()) seen += new TextDecoder().decode(r.value);
    return seen;
  };
  return { until, stop };
}

const SETUP_URL = /(https?:\/\/\S+)\/setup#token=(psu_[A-Za-z0-9_-]{43})/;

describe('the compiled binary: the first run', () => {
  // The data directory's SQLite file and the record of the running server in it.
  sqliteOnly('serve on a fresh data dir prints a setup link with the real port; the CLI links use the running server\'s address, and say when they cannot know it', async () => {
    const bin = await buildBinaryOnce();
    const dir = mkdtempSync(join(tmpdir(), 'parley-setup-bin-'));
    const env = { PARLEY_DATA_DIR: join(dir, 'data'), PARLEY_LOG_LEVEL: 'warn' };
    const server = serve(bin, env);
    const url = (await server.until(/listening on (http:\/\/\S+)/))[1]!;
    const port = new URL(url).port;
    expect(port).not.toBe('8787');
    const [, base, token] = await server.until(SETUP_URL);
    expect(base).toBe(`http://127.0.0.1:${port}`);

    // The link, opened: the page; its token makes the admin and signs them in.
    expect((await fetch(`${base}/setup`)).status).toBe(200);
    const post = (op: string, body: unknown) => fetch(`${url}/api/${op}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('setup/createAdmin', { token, name: 'Ann', email: 'ann@example.org' })).status).toBe(200);
    expect((await post('setup/createAdmin', { token, name: 'Ann', email: 'ann@example.org' })).status).toBe(410);

    // No PARLEY_PORT anywhere: the CLI still names the port the server really has.
    const link = await run(bin, ['login-link', '--email', 'ann@example.org'], env);
    expect(link.code).toBe(0);
    expect(link.out).toStartWith(`http://127.0.0.1:${port}/api/auth/login-link?token=pl_`);
    expect(link.err).toContain('the server running on');
    expect(JSON.parse((await run(bin, ['login-link', '--email', 'ann@example.org', '--json'], env)).out).addressSource).toBe('running server');
    const again = await run(bin, ['setup-link'], env);
    expect(again.code).toBe(2);
    expect(again.err).toContain('already has an admin');

    const printed = await server.stop();
    expect(printed.match(new RegExp(SETUP_URL, 'g'))).toHaveLength(1);
    expect(existsSync(join(dir, 'data', 'listening.json'))).toBe(false);

    // Stopped: the address is not known, and the CLI says so plainly.
    const unknown = await run(bin, ['login-link', '--email', 'ann@example.org'], env);
    expect(unknown.out).toStartWith('http://127.0.0.1:8787/api/auth/login-link?token=pl_');
    expect(unknown.err).toContain("the server's address is not known");
    // The service's settings file names the port: the link uses it.
    const file = join(dir, 'parley.env');
    writeFileSync(file, 'PARLEY_HOST=0.0.0.0\nPARLEY_PORT=9123\n');
    const fromFile = await run(bin, ['login-link', '--email', 'ann@example.org', '--env-file', file, '--json'], env);
    expect(JSON.parse(fromFile.out)).toMatchObject({ addressSource: 'settings' });
    expect(JSON.parse(fromFile.out).url).toStartWith('http://127.0.0.1:9123/api/auth/login-link?token=pl_');
    const publicUrl = await run(bin, ['login-link', '--email', 'ann@example.org', '--env-file', file], { ...env, PARLEY_PUBLIC_URL: 'https://chat.example.org' });
    expect(publicUrl.out).toStartWith('https://chat.example.org/api/auth/login-link?token=pl_');
    expect(publicUrl.err).not.toContain('note:');

    // With an admin, the next start prints no setup link.
    const later = serve(bin, env);
    await later.until(/listening on/);
    expect(await later.stop()).not.toContain('/setup#token=');
  });

  sqliteOnly('parley setup-link: a fresh link while there is no admin (PARLEY_PUBLIC_URL first); none without the web app', async () => {
    const bin = await buildBinaryOnce();
    const dir = mkdtempSync(join(tmpdir(), 'parley-setup-link-'));
    const env = { PARLEY_DATA_DIR: join(dir, 'data') };
    expect((await run(bin, ['user', 'create', '--email', 'bob@example.org'], env)).code).toBe(0);
    const made = await run(bin, ['setup-link', '--json'], { ...env, PARLEY_PUBLIC_URL: 'https://chat.example.org' });
    expect(made.code).toBe(0);
    expect(JSON.parse(made.out)).toMatchObject({ url: expect.stringMatching(/^https:\/\/chat\.example\.org\/setup#token=psu_/), addressSource: 'PARLEY_PUBLIC_URL' });
    const noWeb = await run(bin, ['setup-link'], { ...env, PARLEY_WEB: 'false' });
    expect(noWeb.code).toBe(2);
    expect(noWeb.err).toContain('parley user create --email you@example.org --admin');

    // serve with the public URL set: the printed link starts with it.
    const server = serve(bin, { ...env, PARLEY_PUBLIC_URL: 'https://chat.example.org' });
    const [, base] = await server.until(SETUP_URL);
    expect(base).toBe('https://chat.example.org');
    await server.stop();
  });
});
