import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { sql } from 'drizzle-orm';
import { createSealer, KEY_FILE, newKeyText, PREVIOUS_KEY_FILE } from '../src/connections/seal';
import { createTestContext, onPg, type TestContext } from './helpers';
import { updateUser } from '../src/account/account.store';
import { startFakeAnthropic } from './fakes/anthropic';

// CLI processes: shared machines can be slow, and nothing here asserts on time.
setDefaultTimeout(60_000);

const tempDir = () => mkdtempSync(join(tmpdir(), 'parley-seal-'));

describe('sealing credentials', () => {
  test('the key file is made on first need, mode 0600; a sealed value names its key and opens only with it', async () => {
    const dataDir = join(tempDir(), 'data');
    const sealer = createSealer({ dataDir, secretKey: undefined, secretKeyPrevious: [] });
    expect(existsSync(join(dataDir, KEY_FILE))).toBe(false);
    const sealed = await sealer.seal('sk-very-secret');
    expect(statSync(join(dataDir, KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(sealed).toStartWith(`v1.${await sealer.currentKeyId()}.`);
    expect(sealed).not.toContain('sk-very-secret');
    expect(await sealer.open(sealed)).toBe('sk-very-secret');
    // Twice the same text: two different ciphertexts (a fresh IV each time).
    expect(await sealer.seal('sk-very-secret')).not.toBe(sealed);

    const other = createSealer({ dataDir: tempDir(), secretKey: newKeyText(), secretKeyPrevious: [] });
    expect(other.open(sealed)).rejects.toThrow(/sealed with a key this server does not have .*PARLEY_SECRET_KEY/);
    const tampered = sealed.slice(0, -4) + (sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect(sealer.open(tampered)).rejects.toThrow(/does not open .*changed or damaged/);
  });

  test('PARLEY_SECRET_KEY: no file is written; a key that is not 32 bytes of base64 is refused in words; previous keys still open', async () => {
    const dataDir = tempDir();
    const old = newKeyText();
    const before = createSealer({ dataDir, secretKey: old, secretKeyPrevious: [] });
    const sealed = await before.seal('abc');
    const after = createSealer({ dataDir, secretKey: newKeyText(), secretKeyPrevious: [old] });
    expect(await after.open(sealed)).toBe('abc');
    expect(await after.isCurrent(sealed)).toBe(false);
    expect(existsSync(join(dataDir, KEY_FILE))).toBe(false);
    expect(createSealer({ dataDir, secretKey: 'short', secretKeyPrevious: [] }).seal('x')).rejects.toThrow('PARLEY_SECRET_KEY is not 32 bytes in base64');
  });
});

/** Run the CLI from source against the context's database, with its own data directory (the key file's). */
async function parley(ctx: TestContext, dataDir: string, args: string[], stdin?: string) {
  const where = onPg ? { PARLEY_DATABASE_URL: ctx.deps.config.databaseUrl!, PARLEY_DATA_DIR: dataDir } : { PARLEY_DATA_DIR: dataDir };
  const p = Bun.spawn([process.execPath, join(import.meta.dir, '../cli/main.ts'), ...args], {
    env: { PATH: process.env.PATH ?? '', ...where },
    stdin: stdin === undefined ? 'ignore' : new Blob([stdin]),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

describe('parley connection', () => {
  test('add (key from stdin), list, test, set, rotate-key, remove; the key never printed; the server uses what the CLI added', async () => {
    const claude = startFakeAnthropic({ apiKey: 'sk-ant-from-cli' });
    try {
      const ctx = await createTestContext({ users: [{ email: 'admin@example.org' }], durable: true });
      // The server and the CLI share the data directory (and so the key file) as an install does.
      const dataDir = onPg ? tempDir() : dirname(ctx.db.$client.filename);
      const server = await createTestContext({ sameDatabaseAs: ctx, config: { dataDir, secretKey: undefined } });
      await ctx.store.write((tx) => updateUser(tx, ctx.users[0]!.user.id, { isAdmin: true }, Date.now()));

      const added = await parley(ctx, dataDir, ['connection', 'add', 'claude', '--kind', 'chat', '--api', 'anthropic', '--base-url', claude.url, '--credential', '-', '--option', 'model=claude-sonnet-4-6', '--json'], 'sk-ant-from-cli\n');
      expect({ code: added.code, err: added.err }).toEqual({ code: 0, err: '' });
      expect(JSON.parse(added.out)).toMatchObject({ name: 'claude', hasCredential: true, options: { model: 'claude-sonnet-4-6' } });
      expect(statSync(join(dataDir, KEY_FILE)).mode & 0o777).toBe(0o600);

      const listed = await parley(ctx, dataDir, ['connection', 'list']);
      expect(listed.out).toContain('claude');
      expect(listed.out).toContain('credential ********');
      const tested = await parley(ctx, dataDir, ['connection', 'test', 'claude']);
      expect({ code: tested.code, err: tested.err, out: tested.out.replace(/\d+ ms/, "N ms") }).toEqual({ code: 0, err: "", out: "claude: reachable in N ms, 2 models: claude-sonnet-4-6, claude-haiku-4-5\n" });

      const bad = await parley(ctx, dataDir, ['connection', 'set', 'claude', '--credential', 'sk\nbad']);
      expect(bad).toMatchObject({ code: 2 });
      expect(bad.err).toContain('The credential contains a line break');

      // The server, on its own: reads the row, opens the key with the shared key file.
      const answer = await readAnswer(await server.call('chat/stream', { message: 'Hi', model: 'claude/claude-sonnet-4-6' }, server.users[0] ?? ctx.users[0]));
      expect(answer).toBe('Hello from Claude.');

      const before = (await ctx.query<{ credential: string }>(sql`SELECT credential FROM connections WHERE name = 'claude'`))[0]!.credential;
      const rotated = await parley(ctx, dataDir, ['connection', 'rotate-key', '--json']);
      expect({ code: rotated.code, err: rotated.err }).toEqual({ code: 0, err: '' });
      expect(JSON.parse(rotated.out)).toMatchObject({ resealed: 1, newKeyFile: true });
      const after = (await ctx.query<{ credential: string }>(sql`SELECT credential FROM connections WHERE name = 'claude'`))[0]!.credential;
      expect(after.split('.')[1]).not.toBe(before.split('.')[1]);
      expect(readFileSync(join(dataDir, PREVIOUS_KEY_FILE), 'utf8').trim()).not.toBe('');
      expect((await parley(ctx, dataDir, ['connection', 'test', 'claude'])).code).toBe(0);

      for (const r of [added, listed, tested, rotated]) expect(r.out + r.err).not.toContain('sk-ant-from-cli');
      expect((await parley(ctx, dataDir, ['connection', 'remove', 'claude'])).out).toBe('removed claude\n');
    } finally {
      claude.stop();
    }
  });
});

async function readAnswer(res: Response): Promise<string> {
  const { readFrames } = await import('./sse');
  return (await readFrames(res)).filter((f) => f.data.type === 'text.delta').map((f) => f.data.delta).join('');
}
