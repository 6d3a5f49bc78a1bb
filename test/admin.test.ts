import { afterAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { Database } from 'bun:sqlite';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operations } from '../src/app';
import { openDataDir } from '../src/db/connection';
import { updateUser } from '../src/account/account.store';
import { KEEP_BACKUPS } from '../src/admin/backups';
import { createTestContext, bearer, cookie, seedUser, onPg, sqliteOnly, ENVELOPE_KEYS, SPEC_ERRORS, type TestUser } from './helpers';

/**
 * The administration API through HTTP on a file database in a data directory (on a PostgreSQL
 * run: on the run's database, the data directory holding no database): every operation
 * answers an admin, refuses an ordinary user (403) and a caller without a credential (401), and
 * keeps its own rules (masked secrets, backup names only, an admin always left).
 */

const dataDir = join(mkdtempSync(join(tmpdir(), 'parley-admin-')), 'data');
const AI_KEY = 'sk-admin-test-secret-value';
if (onPg) mkdirSync(dataDir, { mode: 0o700 });
const ctx = await createTestContext({ db: onPg ? undefined : openDataDir(dataDir), config: { dataDir, aiApiKey: AI_KEY, aiProvider: 'none' } as never });
const admin = await seedUser(ctx.store, { email: 'admin@example.org', name: 'Ada' }, ctx.deps.config);
await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
const plain = await seedUser(ctx.store, { email: 'plain@example.org', name: 'Pat' }, ctx.deps.config);
afterAll(() => onPg || ctx.db.$client.close());

const ADMIN_OPS: string[] = operations.filter((op) => op.path.startsWith('admin/')).map((op) => op.path);

/** A valid input for each operation, so a refusal is about the caller and nothing else. */
const validInput = (path: string): unknown =>
  ({
    'admin/createUser': { email: 'someone@example.org' },
    'admin/updateUser': { userId: plain.user.id, tier: 'PRO' },
    'admin/grantCredits': { userId: plain.user.id, amount: 5 },
    'admin/listApiKeys': { userId: plain.user.id },
    'admin/createApiKey': { userId: plain.user.id, name: 'k' },
    'admin/revokeApiKey': { keyId: plain.keyId },
    'admin/downloadBackup': { name: 'parley-2026-01-01T00-00-00-000Z.db' },
    'admin/addConnection': { name: 'local', kind: 'chat', baseUrl: 'http://127.0.0.1:11434/v1' },
    'admin/updateConnection': { id: 'local', enabled: false },
    'admin/removeConnection': { id: 'local' },
    'admin/testConnection': { id: 'local' },
    'admin/setModelSettings': { id: 'local/llama3', hidden: true },
    'admin/postNews': { title: 'Hello', body: 'World' },
    'admin/deleteNews': { id: 'none' },
    'admin/getSupportThread': { threadId: 'none' },
    'admin/replySupport': { threadId: 'none', message: 'Hi' },
    'admin/addMiniApp': { name: 'Calc', url: 'https://calc.example.org/' },
    'admin/updateMiniApp': { id: 'none', name: 'Calc' },
    'admin/removeMiniApp': { id: 'none' },
    'admin/setUsageTier': { name: 'FREE', period: 'day', tokens: 0 },
    'admin/removeUsageTier': { name: 'FREE' },
    'admin/setModelPrice': { model: 'local/llama3', perRequest: 1 },
    'admin/removeModelPrice': { model: 'local/llama3' },
    'admin/addMcpServer': { name: 'docs', url: 'https://mcp.example.org/mcp' },
    'admin/updateMcpServer': { id: 'docs', enabled: false },
    'admin/removeMcpServer': { id: 'docs' },
    'admin/testMcpServer': { id: 'docs' },
  })[path] ?? {};

describe('administration API', () => {
  test('the set of admin operations', () => {
    expect(ADMIN_OPS.sort()).toEqual(
      [
        'admin/createApiKey', 'admin/createBackup', 'admin/createUser', 'admin/discoverServers', 'admin/doctor', 'admin/downloadBackup', 'admin/getSettings',
        'admin/grantCredits', 'admin/listApiKeys', 'admin/listBackups', 'admin/listUsers', 'admin/revokeApiKey', 'admin/updateUser',
        'admin/listConnections', 'admin/addConnection', 'admin/updateConnection', 'admin/removeConnection', 'admin/testConnection',
        'admin/listModelSettings', 'admin/setModelSettings', 'admin/setDefaultModels',
        // The tool switches (src/tools/tools.routes.ts).
        'admin/getToolSettings', 'admin/setToolSettings',
        // The service's pages (src/admin/admin-service.routes.ts).
        'admin/listNews', 'admin/postNews', 'admin/deleteNews', 'admin/listSupportThreads', 'admin/getSupportThread', 'admin/replySupport',
        'admin/listMiniApps', 'admin/addMiniApp', 'admin/updateMiniApp', 'admin/removeMiniApp',
        // Usage metering and quotas (src/usage/).
        'admin/getUsage', 'admin/getUsageQuotas', 'admin/setUsageTier', 'admin/removeUsageTier', 'admin/setModelPrice', 'admin/removeModelPrice',
        // MCP servers (src/mcp/mcp.routes.ts).
        'admin/listMcpServers', 'admin/addMcpServer', 'admin/updateMcpServer', 'admin/removeMcpServer', 'admin/testMcpServer', 'admin/setMcpSettings',
      ].sort(),
    );
  });

  test('every admin/* row is marked admin-only (the check is the row\'s, not each handler\'s)', () => {
    expect(operations.filter((op) => op.path.startsWith('admin/') && !(op as { admin?: boolean }).admin).map((op) => op.path)).toEqual([]);
  });

  for (const path of ADMIN_OPS) {
    test(`${path}: 401 without a credential, 403 for a non-admin (key, bearer, cookie), nothing changed`, async () => {
      const none = await ctx.json(path, validInput(path));
      expect(none.status).toBe(401);
      expect(none.body).toEqual(SPEC_ERRORS[401]);
      const usersBefore = await ctx.query(sql`SELECT * FROM users ORDER BY id`);
      const keysBefore = await ctx.query(sql`SELECT id, revoked_at FROM api_keys ORDER BY id`);
      for (const as of [plain, bearer(plain), cookie(plain)]) {
        const res = await ctx.json(path, validInput(path), as);
        expect({ path, status: res.status }).toEqual({ path, status: 403 });
        expect(Object.keys(res.body).sort()).toEqual(ENVELOPE_KEYS);
        expect(res.body).toEqual(SPEC_ERRORS[403]);
      }
      expect(await ctx.query(sql`SELECT * FROM users ORDER BY id`)).toEqual(usersBefore);
      expect(await ctx.query(sql`SELECT id, revoked_at FROM api_keys ORDER BY id`)).toEqual(keysBefore);
    });
  }

  test('auth/getSession says whether the caller is an admin', async () => {
    expect((await ctx.json('auth/getSession', {}, admin)).body.user.isAdmin).toBe(true);
    expect((await ctx.json('auth/getSession', {}, plain)).body.user.isAdmin).toBe(false);
  });

  test('users: list, create (409 for a used e-mail), update every field, 404 for an unknown user', async () => {
    const list = await ctx.json('admin/listUsers', {}, admin);
    expect(list.status).toBe(200);
    const emails = list.body.users.map((u: { email: string; isAdmin: boolean }) => [u.email, u.isAdmin]);
    expect(emails).toContainEqual(['admin@example.org', true]);
    expect(emails).toContainEqual(['plain@example.org', false]);

    const created = await ctx.json('admin/createUser', { email: 'Cleo@Example.org', name: 'Cleo', accountType: 'student' }, admin);
    expect(created.status).toBe(200);
    expect(created.body.user).toMatchObject({ email: 'cleo@example.org', name: 'Cleo', accountType: 'STUDENT', isAdmin: false, bonusBalance: 0 });
    const dup = await ctx.json('admin/createUser', { email: 'cleo@example.org' }, admin);
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ code: 'CONFLICT', message: 'a user with e-mail cleo@example.org already exists' });
    expect((await ctx.json('admin/createUser', { email: 'not an address' }, admin)).status).toBe(400);

    const userId = created.body.user.id;
    const updated = await ctx.json(
      'admin/updateUser',
      { userId, tier: 'pro', active: true, expires: '2099-05-01', product: 'pro_yearly', accountType: 'DEVELOPER', locked: true, name: 'Cleo P.' },
      admin,
    );
    expect(updated.status).toBe(200);
    expect(updated.body.user).toMatchObject({
      name: 'Cleo P.',
      accountType: 'DEVELOPER',
      isLocked: true,
      subscription: { tier: 'PRO', isActive: true, expiresAt: '2099-05-01T00:00:00.000Z', productId: 'pro_yearly' },
    });
    // What the user sees of themselves changed too (the credential cache was told).
    const cleo = await seedUser(ctx.store, { email: 'cleo2@example.org' }, ctx.deps.config);
    await ctx.json('admin/updateUser', { userId: cleo.user.id, tier: 'PLUS' }, admin);
    expect((await ctx.json('auth/getSession', {}, cleo)).body.user.subscription.tier).toBe('PLUS');

    const cleared = await ctx.json('admin/updateUser', { userId, expires: null, product: null, locked: false }, admin);
    expect(cleared.body.user).toMatchObject({ isLocked: false, subscription: { expiresAt: null, productId: null } });
    expect((await ctx.json('admin/updateUser', { userId, tier: 'GOLD' }, admin)).body).toMatchObject({ status: 400, message: 'tier must be one of FREE, PLUS, PRO' });
    expect((await ctx.json('admin/updateUser', { userId, expires: '2027-02-30' }, admin)).status).toBe(400);
    expect((await ctx.json('admin/updateUser', { userId }, admin)).status).toBe(400);
    expect((await ctx.json('admin/updateUser', { userId: 'nobody', tier: 'PRO' }, admin)).body).toEqual(SPEC_ERRORS[404]);
  });

  test('the admin flag: granted through the API, and a server always keeps an admin', async () => {
    const own = await ctx.json('admin/updateUser', { userId: admin.user.id, admin: false }, admin);
    expect(own.status).toBe(409);
    expect(own.body.message).toContain('your own admin flag');
    expect((await ctx.json('auth/getSession', {}, admin)).body.user.isAdmin).toBe(true);

    const bea = await seedUser(ctx.store, { email: 'bea@example.org' }, ctx.deps.config);
    expect((await ctx.json('admin/listUsers', {}, bea)).status).toBe(403);
    const made = await ctx.json('admin/updateUser', { userId: bea.user.id, admin: true }, admin);
    expect(made.body.user.isAdmin).toBe(true);
    expect((await ctx.json('admin/listUsers', {}, bea)).status).toBe(200); // at once: no stale cached row

    // Bea removes Ada: allowed, another admin (Bea) remains. Bea cannot then remove herself.
    expect((await ctx.json('admin/updateUser', { userId: admin.user.id, admin: false }, bea)).body.user.isAdmin).toBe(false);
    expect((await ctx.json('admin/listUsers', {}, admin)).status).toBe(403);
    expect((await ctx.json('admin/updateUser', { userId: bea.user.id, admin: false }, bea)).status).toBe(409);
    // And back, for the tests that follow.
    expect((await ctx.json('admin/updateUser', { userId: admin.user.id, admin: true }, bea)).body.user.isAdmin).toBe(true);
  });

  test('credits: a grant adds to the bonus balance the user sees; 404 for an unknown user; 400 for a non-positive amount', async () => {
    const before = (await ctx.json('credits/getBalance', {}, plain)).body;
    const granted = await ctx.json('admin/grantCredits', { userId: plain.user.id, amount: 25, reason: 'welcome' }, admin);
    expect(granted.status).toBe(200);
    expect(granted.body.bonusBalance).toBe((before.bonusBalance ?? 0) + 25);
    expect((await ctx.json('credits/getBalance', {}, plain)).body.bonusBalance).toBe(granted.body.bonusBalance);
    expect((await ctx.json('admin/grantCredits', { userId: 'nobody', amount: 1 }, admin)).status).toBe(404);
    expect((await ctx.json('admin/grantCredits', { userId: plain.user.id, amount: 0 }, admin)).status).toBe(400);
  });

  test("API keys of any user: create (works at once), list, revoke (stops working); 404 for unknown ones", async () => {
    const made = await ctx.json('admin/createApiKey', { userId: plain.user.id, name: 'for the app' }, admin);
    expect(made.status).toBe(200);
    const session = await ctx.json('auth/getSession', {}, { 'x-api-key': made.body.key });
    expect(session.body.user.email).toBe('plain@example.org');

    const listed = await ctx.json('admin/listApiKeys', { userId: plain.user.id }, admin);
    const row = listed.body.keys.find((k: { keyId: string }) => k.keyId === made.body.keyId);
    expect(row).toMatchObject({ name: 'for the app', prefix: made.body.prefix, revokedAt: null });
    expect(JSON.stringify(listed.body)).not.toContain(made.body.key);

    expect((await ctx.json('admin/revokeApiKey', { keyId: made.body.keyId }, admin)).body).toEqual({ success: true });
    expect((await ctx.json('auth/getSession', {}, { 'x-api-key': made.body.key })).status).toBe(401);
    expect((await ctx.json('admin/revokeApiKey', { keyId: made.body.keyId }, admin)).status).toBe(200);
    expect((await ctx.json('admin/revokeApiKey', { keyId: 'nope' }, admin)).status).toBe(404);
    expect((await ctx.json('admin/listApiKeys', { userId: 'nobody' }, admin)).status).toBe(404);
    expect((await ctx.json('admin/createApiKey', { userId: 'nobody', name: 'x' }, admin)).status).toBe(404);
  });

  // Backups copy the SQLite file (on PostgreSQL admin/createBackup answers 409: pg_dump's job).
  sqliteOnly('backups: create, list, download the SQLite file (an admin only); names only from the list, never a path', async () => {
    const made = await ctx.json('admin/createBackup', {}, admin);
    expect(made.status).toBe(200);
    expect(made.body.backup.name).toMatch(/^parley-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.db$/);
    expect(readdirSync(join(dataDir, 'backups'))).toContain(made.body.backup.name);

    const list = await ctx.json('admin/listBackups', {}, admin);
    expect(list.body.keep).toBe(KEEP_BACKUPS);
    expect(list.body.backups[0]).toEqual(made.body.backup);

    const res = await ctx.call('admin/downloadBackup', { name: made.body.backup.name }, bearer(admin));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.sqlite3');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${made.body.backup.name}"`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.length).toBe(made.body.backup.bytes);
    expect(new TextDecoder().decode(bytes.slice(0, 16))).toBe('SQLite format 3\0');
    // The copy holds the accounts.
    const copy = join(dataDir, 'copy.db');
    writeFileSync(copy, bytes);
    const opened = new Database(copy, { readonly: true });
    expect(opened.query('SELECT email FROM users WHERE is_admin = 1').all()).toContainEqual({ email: 'admin@example.org' });
    opened.close();

    // A file beside the backups, and paths that try to leave the folder: all 404, the same envelope.
    writeFileSync(join(dataDir, 'backups', 'notes.txt'), 'private');
    for (const name of ['../parley.db', 'parley.db', '../../etc/passwd', 'notes.txt', `../backups/${made.body.backup.name}`, '/etc/passwd', 'parley-2026-01-01T00-00-00-000Z.db', `${made.body.backup.name}/..`]) {
      const refused = await ctx.json('admin/downloadBackup', { name }, admin);
      expect({ name, status: refused.status, body: refused.body }).toEqual({ name, status: 404, body: SPEC_ERRORS[404] });
    }
    const notAdmin = await ctx.json('admin/downloadBackup', { name: made.body.backup.name }, plain);
    expect(notAdmin.status).toBe(403);
  });

  sqliteOnly(`backups: only the newest ${KEEP_BACKUPS} are kept`, async () => {
    const names: string[] = [];
    for (let i = 0; i < KEEP_BACKUPS + 2; i++) names.push((await ctx.json('admin/createBackup', {}, admin)).body.backup.name);
    const kept = (await ctx.json('admin/listBackups', {}, admin)).body.backups.map((b: { name: string }) => b.name);
    expect(kept).toEqual(names.slice(-KEEP_BACKUPS).reverse());
  }, 60_000);

  test('doctor: the report of `parley doctor`, each check with its state', async () => {
    const res = await ctx.json('admin/doctor', {}, admin);
    expect(res.status).toBe(200);
    expect(typeof res.body.ok).toBe('boolean');
    const names = res.body.checks.map((c: { name: string }) => c.name);
    // On PostgreSQL the data directory's checks are the SQLite file's, so they are not made.
    if (onPg) expect(res.body.checks.find((c: { name: string }) => c.name === 'postgres')).toMatchObject({ status: 'ok' });
    else {
      expect(names).toContain('data directory');
      expect(res.body.checks.find((c: { name: string }) => c.name === 'data directory')).toMatchObject({ status: 'ok' });
    }
    for (const c of res.body.checks) expect(['ok', 'warn', 'fail', 'skip']).toContain(c.status);
  }, 30_000);

  test('settings: every setting with its value and source, secrets masked', async () => {
    const res = await ctx.json('admin/getSettings', {}, admin);
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).not.toContain(AI_KEY);
    const byEnv = new Map(res.body.settings.map((s: { env: string }) => [s.env, s]));
    expect(byEnv.get('PARLEY_AI_API_KEY')).toMatchObject({ secret: true, value: '********', source: 'set' });
    expect(byEnv.get('PARLEY_DATA_DIR')).toMatchObject({ secret: false, value: dataDir, source: 'set', flag: '--data-dir' });
    expect(byEnv.get('PARLEY_HOST')).toMatchObject({ value: '127.0.0.1', source: 'default' });
    // An unset secret shows as unset, not as a mask.
    expect(byEnv.get('PARLEY_EXPO_ACCESS_TOKEN')).toMatchObject({ secret: true, value: '' });
    expect(res.body.settings.length).toBeGreaterThan(20);
    // A parsed value is shown as an admin writes it, never as "[object Object]".
    expect(byEnv.get('PARLEY_RATE_LIMIT_WRITE')).toMatchObject({ value: '120/min', source: 'default' });
    expect(JSON.stringify(res.body)).not.toContain('[object Object]');
  });

  test("a URL's user name and password are masked, whichever setting holds it", async () => {
    const withUrl = await createTestContext({ config: { dataDir, aiProvider: 'none', searxngUrl: 'http://sam:hunter2@searx.lan:8080/search' } as never });
    const boss = await seedUser(withUrl.store, { email: 'boss@example.org' }, withUrl.deps.config);
    await withUrl.store.write((tx) => updateUser(tx, boss.user.id, { isAdmin: true }, Date.now()));
    const res = await withUrl.json('admin/getSettings', {}, boss);
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
    expect(JSON.stringify(res.body)).not.toContain('sam');
    const searx = res.body.settings.find((s: { env: string }) => s.env === 'PARLEY_SEARXNG_URL');
    expect(searx.value).toBe('http://********:********@searx.lan:8080/search');
  });

  sqliteOnly('two backups asked for at once make one copy, which both get', async () => {
    const [a, b] = await Promise.all([ctx.json('admin/createBackup', {}, admin), ctx.json('admin/createBackup', {}, admin)]);
    expect(a.status).toBe(200);
    expect(b.body.backup).toEqual(a.body.backup);
  });
});
