import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { dirname, join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createTestContext, failureOf, onPg, SPEC_ERRORS, type TestContext } from './helpers';
import { createMiniApp } from '../src/miniapps/miniapp.store';
import { checkMiniAppDescription, checkMiniAppName, checkMiniAppPosition, checkMiniAppUrl, MiniAppRefusal } from '../src/miniapps/miniapp.rules';

// Requests and CLI processes: shared machines can be slow, and nothing here asserts on time.
setDefaultTimeout(60_000);

const setup = () => createTestContext({ users: [{ email: 'ann@example.org' }], durable: true });

const addApp = (ctx: TestContext, name: string, position?: number, extra: { iconUrl?: string; description?: string } = {}) =>
  ctx.store.write((tx) => createMiniApp(tx, { name, url: `https://${name.toLowerCase()}.example.org/`, iconUrl: extra.iconUrl ?? null, description: extra.description ?? null, position }, Date.now()));

describe('miniApps/list', () => {
  test('every app, ordered by position then name, in the documented shape', async () => {
    const ctx = await setup();
    const ann = ctx.users[0]!;
    expect(await ctx.json('miniApps/list', {}, ann)).toMatchObject({ status: 200, body: { apps: [] } });
    const zeta = await addApp(ctx, 'Zeta', 1, { iconUrl: 'https://cdn.example.org/z.png', description: 'Last letter' });
    await addApp(ctx, 'alpha', 5);
    await addApp(ctx, 'Beta', 1);
    const appended = await addApp(ctx, 'Gamma'); // no position: after the last (5)
    expect(appended.position).toBe(6);
    const { body } = await ctx.json('miniApps/list', {}, ann);
    expect(body.apps.map((a: any) => a.name)).toEqual(['Beta', 'Zeta', 'alpha', 'Gamma']);
    expect(body.apps[1]).toEqual({ id: zeta.id, name: 'Zeta', url: 'https://zeta.example.org/', iconUrl: 'https://cdn.example.org/z.png', description: 'Last letter' });
    expect(body.apps[0]).toMatchObject({ iconUrl: null, description: null });
  });

  test('401 without a credential', async () => {
    const ctx = await setup();
    expect(await ctx.json('miniApps/list', {})).toMatchObject({ status: 401, body: SPEC_ERRORS[401] });
  });

  test('names are unique regardless of case, in the database too', async () => {
    const ctx = await setup();
    await addApp(ctx, 'Notes');
    expect(await failureOf(addApp(ctx, 'NOTES'))).toMatch(/UNIQUE|duplicate key/);
  });
});

describe('mini app rules', () => {
  test('https anywhere, http only to this machine, nothing else', () => {
    for (const ok of ['https://apps.example.org/calc?x=1#top', 'http://localhost:5173/', 'http://app.localhost/', 'http://127.0.0.1:8080/a', 'http://[::1]:3000/'])
      expect(checkMiniAppUrl(ok, '--url')).toBe(new URL(ok).href);
    for (const bad of ['http://apps.example.org/', 'ftp://example.org/', 'javascript:alert(1)', 'data:text/html,hi', '/relative', 'example.org', 'https://user:pw@example.org/', `https://example.org/${'a'.repeat(2048)}`])
      expect(() => checkMiniAppUrl(bad, '--url')).toThrow(MiniAppRefusal);
  });

  test('names, descriptions and positions within their bounds', () => {
    expect(checkMiniAppName('  Calc ')).toBe('Calc');
    expect(checkMiniAppName('x'.repeat(100))).toHaveLength(100);
    for (const bad of ['', '   ', 'x'.repeat(101), 'two\nlines']) expect(() => checkMiniAppName(bad)).toThrow(MiniAppRefusal);
    expect(checkMiniAppDescription('  ')).toBeNull();
    expect(() => checkMiniAppDescription('d'.repeat(501))).toThrow(MiniAppRefusal);
    expect([checkMiniAppPosition('0'), checkMiniAppPosition('1000000')]).toEqual([0, 1_000_000]);
    for (const bad of ['-1', '1.5', '0x10', '1e3', ' 5', '', '1000001']) expect(() => checkMiniAppPosition(bad)).toThrow(MiniAppRefusal);
  });
});

/** Run the CLI from source against the context's database (its SQLite file, or its PostgreSQL database). */
async function parley(ctx: TestContext, args: string[]) {
  const where = onPg ? { PARLEY_DATABASE_URL: ctx.deps.config.databaseUrl! } : { PARLEY_DATA_DIR: dirname(ctx.db.$client.filename) };
  const p = Bun.spawn([process.execPath, join(import.meta.dir, '../cli/main.ts'), ...args], {
    env: { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: mkdtempSync(join(tmpdir(), 'parley-miniapps-cli-')), ...where },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

describe('parley miniapps', () => {
  test('add, list, set and remove with --json; users see the catalogue as the admin arranged it', async () => {
    const ctx = await setup();
    const ann = ctx.users[0]!;
    const json = async (args: string[]) => {
      const r = await parley(ctx, [...args, '--json']);
      expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: '' });
      return JSON.parse(r.out);
    };
    const calc = await json(['miniapps', 'add', '--name', ' Calculator ', '--url', 'https://calc.example.org', '--icon', 'https://calc.example.org/icon.png', '--description', 'Sums and more']);
    expect(Object.keys(calc).sort()).toEqual(['createdAt', 'description', 'iconUrl', 'id', 'name', 'position', 'updatedAt', 'url']);
    expect(calc).toMatchObject({ name: 'Calculator', url: 'https://calc.example.org/', iconUrl: 'https://calc.example.org/icon.png', description: 'Sums and more', position: 1 });
    const dev = await json(['miniapps', 'add', '--name', 'Dev', '--url', 'http://localhost:5173/app']);
    expect(dev).toMatchObject({ position: 2, iconUrl: null, description: null });

    expect((await json(['miniapps', 'list'])).map((a: any) => a.name)).toEqual(['Calculator', 'Dev']);
    expect((await ctx.json('miniApps/list', {}, ann)).body.apps).toEqual([
      { id: calc.id, name: 'Calculator', url: 'https://calc.example.org/', iconUrl: 'https://calc.example.org/icon.png', description: 'Sums and more' },
      { id: dev.id, name: 'Dev', url: 'http://localhost:5173/app', iconUrl: null, description: null },
    ]);

    // Move Dev first, rename it (a change of case of its own name is no clash), clear Calculator's icon.
    expect(await json(['miniapps', 'set', dev.id, '--position', '0', '--name', 'DEV'])).toMatchObject({ id: dev.id, name: 'DEV', position: 0 });
    expect(await json(['miniapps', 'set', calc.id, '--icon', '', '--description', ''])).toMatchObject({ iconUrl: null, description: null });
    expect((await ctx.json('miniApps/list', {}, ann)).body.apps.map((a: any) => [a.name, a.iconUrl])).toEqual([
      ['DEV', null],
      ['Calculator', null],
    ]);
    const human = await parley(ctx, ['miniapps', 'list']);
    expect(human.out).toBe(`${dev.id}  0  DEV  http://localhost:5173/app\n${calc.id}  1  Calculator  https://calc.example.org/\n`);

    expect(await json(['miniapps', 'remove', dev.id])).toEqual({ removed: true, id: dev.id });
    expect((await ctx.json('miniApps/list', {}, ann)).body.apps.map((a: any) => a.id)).toEqual([calc.id]);
  });

  test('refusals exit 2 with one line and change nothing', async () => {
    const ctx = await setup();
    const existing = await addApp(ctx, 'Notes', 3);
    const other = await addApp(ctx, 'Todo', 4);
    const refused = async (args: string[], says: string) => {
      const r = await parley(ctx, args);
      expect({ args, code: r.code, out: r.out, lines: r.err.trim().split('\n').length, says: r.err.includes(says) }).toEqual({ args, code: 2, out: '', lines: 1, says: true });
    };
    const add = (...more: string[]) => ['miniapps', 'add', '--name', 'New', '--url', 'https://new.example.org', ...more];
    await refused(['miniapps', 'add', '--name', 'notes', '--url', 'https://x.example.org'], 'already exists');
    await refused(['miniapps', 'add', '--name', '  ', '--url', 'https://x.example.org'], '--name');
    await refused(['miniapps', 'add', '--name', 'New', '--url', 'http://new.example.org'], '--url');
    await refused(add('--icon', 'http://cdn.example.org/i.png'), '--icon');
    await refused(add('--position', '-1'), '--position');
    await refused(['miniapps', 'set', other.id, '--name', 'NOTES'], 'already exists');
    await refused(['miniapps', 'set', other.id], 'nothing to change');
    await refused(['miniapps', 'set', 'nope', '--position', '1'], 'no mini app');
    await refused(['miniapps', 'remove', 'nope'], 'no mini app');
    const apps = (await ctx.json('miniApps/list', {}, ctx.users[0]!)).body.apps;
    expect(apps.map((a: any) => [a.id, a.name])).toEqual([
      [existing.id, 'Notes'],
      [other.id, 'Todo'],
    ]);
  });
});
