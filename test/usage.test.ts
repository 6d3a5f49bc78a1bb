import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createTestContext, onPg, until, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf } from './sse';
import { startFakeOpenAI } from './fakes/openai';
import { updateUser } from '../src/account/account.store';
import { listUsageRecords } from '../src/usage/usage.store';
import { pruneExpired } from '../src/tasks/prune-expired';

// The usage reports (docs/usage.md): `usage/*` for a user's own, `admin/getUsage` and
// `parley usage` for everyone's, on either store.

setDefaultTimeout(60_000);

const root = new URL('..', import.meta.url).pathname;
const openai = startFakeOpenAI();
afterAll(() => openai.stop());
beforeEach(() => {
  openai.chatScript = () => ({ deltas: [{ content: 'Fine.' }], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110, prompt_tokens_details: { cached_tokens: 40 } } });
});

const DAY1 = Date.parse('2026-03-01T10:00:00.000Z');
const DAY2 = Date.parse('2026-03-02T23:59:00.000Z');

/** Ann: two turns on day 1 (one with her key, one with her session), one on day 2; Bob: one on day 2. Ann is an admin. */
async function seed() {
  let clock = DAY1;
  const ctx = await createTestContext({
    users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }],
    durable: true,
    now: () => clock,
    config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: undefined },
  });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, ann.user.id, { isAdmin: true }, DAY1));
  const turn = async (as: TestUser | Record<string, string>) => {
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Hi' }, as));
    expect(typesOf(frames).at(-1)).toBe('done');
  };
  await turn(ann);
  await turn({ authorization: `Bearer ${ann.token}` });
  clock = DAY2;
  await turn(ann);
  await turn(bob);
  const count = async (u: TestUser) => (await ctx.store.read((tx) => listUsageRecords(tx, u.user.id, { limit: 10 }))).length;
  await until(async () => (await count(ann)) === 3 && (await count(bob)) === 1, 'usage written');
  return { ctx, ann, bob, setClock: (ms: number) => (clock = ms) };
}

const row = (calls: number, extra: object = {}) => ({
  inputTokens: 100 * calls,
  outputTokens: 10 * calls,
  cachedTokens: 40 * calls,
  reasoningTokens: 0,
  units: 0,
  calls,
  estimatedCalls: 0,
  credits: 0,
  ...extra,
});

describe('usage/getUsage', () => {
  test('the caller\'s own, by day, model, key and kind; totals; the range of whole UTC days', async () => {
    const { ctx, ann, bob } = await seed();
    const range = { from: '2026-03-01', to: '2026-03-02' };
    const byDay = await ctx.json('usage/getUsage', range, ann);
    expect(byDay.status).toBe(200);
    expect(byDay.body).toEqual({
      ...range,
      by: 'day',
      totals: row(3),
      groups: [{ key: '2026-03-01', label: null, ...row(2) }, { key: '2026-03-02', label: null, ...row(1) }],
    });
    const byModel = (await ctx.json('usage/getUsage', { ...range, by: 'model' }, ann)).body;
    expect(byModel.groups).toEqual([{ key: expect.stringMatching(/\/small$/), label: null, ...row(3) }]);
    const byKey = (await ctx.json('usage/getUsage', { ...range, by: 'key' }, ann)).body;
    // Calls with the key, and the one made with a session (no key).
    expect(byKey.groups.length).toBe(2);
    expect(byKey.groups).toEqual(expect.arrayContaining([{ key: ann.keyId, label: expect.stringContaining('…'), ...row(2) }, { key: null, label: null, ...row(1) }]));
    expect((await ctx.json('usage/getUsage', { ...range, by: 'kind' }, ann)).body.groups).toEqual([{ key: 'chat', label: null, ...row(3) }]);
    // One day only; Bob sees his own.
    expect((await ctx.json('usage/getUsage', { from: '2026-03-02', to: '2026-03-02' }, ann)).body.totals).toEqual(row(1));
    expect((await ctx.json('usage/getUsage', range, bob)).body.totals).toEqual(row(1));
    // The default: the last 30 days up to today (the clock's day 2).
    expect((await ctx.json('usage/getUsage', {}, ann)).body).toMatchObject({ from: '2026-02-01', to: '2026-03-02', totals: row(3) });
  });

  test('a range that is not one: 400 naming the field', async () => {
    const { ctx, ann } = await seed();
    const bad = async (input: object, path: string) => {
      const r = await ctx.json('usage/getUsage', input, ann);
      expect(r.status).toBe(400);
      expect(r.body.data.issues[0].path).toEqual([path]);
    };
    await bad({ from: '2026-03-05', to: '2026-03-01' }, 'from');
    await bad({ from: '2024-01-01', to: '2026-03-01' }, 'from');
    await bad({ to: '2026-02-30' }, 'to');
    await bad({ to: '2026-3-1' }, 'to');
    expect((await ctx.json('usage/getUsage', { by: 'user' }, ann)).status).toBe(400);
  });
});

describe('retention', () => {
  test('calls older than PARLEY_USAGE_RETENTION_DAYS go with the hourly pass; the rest stay', async () => {
    const { ctx, ann, bob, setClock } = await seed();
    // 400 days after day 1's end: day 1's calls are past the retention, day 2's are not.
    setClock(Date.parse('2026-03-02T00:00:00.000Z') + 400 * 86_400_000 + 1000);
    await pruneExpired(ctx.deps);
    const left = await ctx.store.read((tx) => listUsageRecords(tx, ann.user.id, { limit: 10 }));
    expect(left.length).toBe(1);
    expect((await ctx.store.read((tx) => listUsageRecords(tx, bob.user.id, { limit: 10 }))).length).toBe(1);
  });
});

describe('usage/listCalls', () => {
  test('the caller\'s calls newest first, paged, and those of one turn', async () => {
    const { ctx, ann, bob } = await seed();
    const first = await ctx.json('usage/listCalls', { limit: 2 }, ann);
    expect(first.status).toBe(200);
    expect(first.body.calls.length).toBe(2);
    expect(first.body.calls[0]).toEqual({
      id: expect.any(String),
      createdAt: new Date(DAY2).toISOString(),
      kind: 'chat',
      model: expect.stringMatching(/\/small$/),
      apiKeyId: ann.keyId,
      responseId: expect.any(String),
      assistantId: null,
      inputTokens: 100,
      outputTokens: 10,
      cachedTokens: 40,
      reasoningTokens: 0,
      units: 0,
      estimated: false,
      credits: 0,
    });
    const rest = await ctx.json('usage/listCalls', { limit: 2, before: first.body.nextBefore }, ann);
    expect(rest.body.calls.length).toBe(1);
    expect(rest.body.nextBefore).toBeNull();
    const responseId = first.body.calls[0].responseId;
    expect((await ctx.json('usage/listCalls', { responseId }, ann)).body.calls.map((c: any) => c.id)).toEqual([first.body.calls[0].id]);
    // Someone else's turn: nothing of it.
    expect((await ctx.json('usage/listCalls', { responseId }, bob)).body.calls).toEqual([]);
  });
});

describe('admin/getUsage and parley usage', () => {
  test('everyone\'s by user (labelled with the e-mail), or one user\'s; 403 for others', async () => {
    const { ctx, ann, bob } = await seed();
    const range = { from: '2026-03-01', to: '2026-03-02' };
    const byUser = await ctx.json('admin/getUsage', { ...range, by: 'user' }, ann);
    expect(byUser.status).toBe(200);
    expect(byUser.body.totals).toEqual(row(4));
    const groups = Object.fromEntries(byUser.body.groups.map((g: any) => [g.label, [g.key, g.calls]]));
    expect(groups).toEqual({ 'ann@example.org': [ann.user.id, 3], 'bob@example.org': [bob.user.id, 1] });
    expect((await ctx.json('admin/getUsage', { ...range, userId: bob.user.id }, ann)).body.groups).toEqual([{ key: '2026-03-02', label: null, ...row(1) }]);
    expect((await ctx.json('admin/getUsage', range, bob)).status).toBe(403);
  });

  test('the CLI: a table, --json (the same report) and --csv', async () => {
    const { ctx, ann } = await seed();
    const where: Record<string, string> = onPg ? { PARLEY_DATABASE_URL: ctx.deps.config.databaseUrl! } : { PARLEY_DATA_DIR: dirname(ctx.db.$client.filename) };
    const env = { PARLEY_DATA_DIR: mkdtempSync(join(tmpdir(), 'parley-usage-')), ...where };
    const parley = (args: string[]) => {
      const p = Bun.spawnSync([process.execPath, join(root, 'cli/main.ts'), 'usage', '--from', '2026-03-01', '--to', '2026-03-02', ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
      return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
    };
    const json = parley(['--json']);
    expect({ code: json.code, err: json.err }).toEqual({ code: 0, err: '' });
    expect(JSON.parse(json.out)).toEqual((await ctx.json('admin/getUsage', { from: '2026-03-01', to: '2026-03-02', by: 'user' }, ann)).body);
    const csv = parley(['--csv', '--by', 'day', '--email', 'ann@example.org']);
    expect(csv.code).toBe(0);
    expect(csv.out).toBe(
      'day,label,inputTokens,outputTokens,cachedTokens,reasoningTokens,units,calls,estimatedCalls,credits\r\n' +
        '2026-03-01,,200,20,80,0,0,2,0,0\r\n' +
        '2026-03-02,,100,10,40,0,0,1,0,0\r\n',
    );
    const table = parley([]);
    expect(table.code).toBe(0);
    expect(table.out).toContain('ann@example.org');
    expect(table.out).toMatch(/total\s+400\s+40\s+160\s+0\s+0\s+4\s+0\s+0/);
    const bad = parley(['--email', 'nobody@example.org']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('no user with e-mail nobody@example.org');
  });
});
