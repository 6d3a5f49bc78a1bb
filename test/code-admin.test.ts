/**
 * The code interpreter as an admin switches it (docs/code-interpreter.md, "Turning it on"): off by
 * default, turned on and off in Admin → Tools (source `code`, per tier) with no restart,
 * PARLEY_CODE_INTERPRETER seeding it on, listed as not installed when Python is missing; and the
 * files a call keeps, kept once when a restart runs the call again.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { PYODIDE_VERSION } from '../src/code/pyodide-dir';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { readFrames, SseReader } from './sse';
import { functionCallEvents, textEvents } from './fakes/openai';
import { resumeInterruptedResponses } from '../src/chat/respond';
import type { AppDeps } from '../src/deps';
import type { Store } from '../src/db/work';
import { fakeAiForFile } from './support/fake-ai-for-file';
import type { Config } from '../src/config';
import { updateUser } from '../src/account/account.store';
import { runCodeTool } from '../src/code/code.tools';
import type { AiEvent } from '../src/ai/ai.types';

setDefaultTimeout(60_000);

const { openai } = fakeAiForFile();
const root = mkdtempSync(join(tmpdir(), 'parley-code-admin-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function setup(extra: Partial<Config> = {}) {
  const dataDir = mkdtempSync(join(root, 'data-'));
  const ctx = await createTestContext({
    users: [{ email: 'admin@example.org' }, { email: 'ann@example.org' }],
    config: { dataDir, aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: { capacity: 1000, perMs: 1000 }, rateLimitWrite: { capacity: 1000, perMs: 1000 }, ...extra },
  });
  const [admin, ann] = ctx.users as [TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  return { ctx, admin, ann };
}

/** Whether a chat turn of `as` offers the model `run_python`. */
async function offered(ctx: TestContext, as: TestUser): Promise<boolean> {
  openai.requests.length = 0;
  await readFrames(await ctx.call('chat/stream', { message: 'Hello' }, as));
  const body = openai.requests.find((r) => r.path === 'POST /v1/chat/completions')!.body as any;
  return (body.tools ?? []).some((t: any) => t.function?.name === 'run_python');
}

const codeRow = async (ctx: TestContext, admin: TestUser) => ((await ctx.json('admin/getToolSettings', {}, admin)).body.sources as any[]).find((s) => s.id === 'code');
const switchCode = async (ctx: TestContext, admin: TestUser, change: Record<string, unknown>) => {
  const res = await ctx.json('admin/setToolSettings', { sources: [{ id: 'code', ...change }] }, admin);
  expect(res.status).toBe(200);
  return (res.body.sources as any[]).find((s) => s.id === 'code');
};

describe('the code interpreter, switched by an admin', () => {
  test('off by default; the admin turns it on, for some tiers, and off again, with no restart', async () => {
    const { ctx, admin, ann } = await setup();
    const row = await codeRow(ctx, admin);
    expect(row).toMatchObject({ id: 'code', label: 'Code interpreter', enabled: false, available: true, unavailableReason: null, tiers: null });
    expect(row.note).toBe('Each running sandbox is a child process of about 170 MB; at most 2 run at once (PARLEY_CODE_MAX_SANDBOXES).');
    // Listed with its tool even while off, so the admin sees what turning it on gives.
    expect(row.tools.map((t: any) => t.name)).toEqual(['run_python', 'run_javascript']);
    expect(await offered(ctx, ann)).toBe(false);

    const doctorLine = async () => ((await ctx.json('admin/doctor', {}, admin)).body.checks as any[]).find((c) => c.name === 'code interpreter').detail as string;
    expect(await doctorLine()).toContain('off (an admin turns it on in Admin → Tools)');
    expect(await switchCode(ctx, admin, { enabled: true })).toMatchObject({ enabled: true });
    expect(await offered(ctx, ann)).toBe(true);
    expect(await doctorLine()).toStartWith(`Python ready (Pyodide ${PYODIDE_VERSION} in `);
    expect(await doctorLine()).toContain('standard library only), on;');

    await switchCode(ctx, admin, { tiers: ['PRO'] });
    expect(await offered(ctx, ann)).toBe(false);
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { subscriptionTier: 'PRO' }, Date.now()));
    expect(await offered(ctx, ann)).toBe(true);

    expect(await switchCode(ctx, admin, { enabled: false })).toMatchObject({ enabled: false, tiers: ['PRO'] });
    expect(await offered(ctx, ann)).toBe(false);
  });

  test('another instance on the same database follows the switch at its next turn', async () => {
    const { ctx, admin, ann } = await setup();
    const other = await createTestContext({ sameDatabaseAs: ctx, config: ctx.deps.config });
    expect(await offered(other, ann)).toBe(false);
    await switchCode(ctx, admin, { enabled: true });
    expect(await offered(other, ann)).toBe(true);
  });

  test('PARLEY_CODE_INTERPRETER=true makes it on until an admin turns it off', async () => {
    const { ctx, admin, ann } = await setup({ codeInterpreter: true });
    expect(await codeRow(ctx, admin)).toMatchObject({ enabled: true });
    expect(await offered(ctx, ann)).toBe(true);
    await switchCode(ctx, admin, { enabled: false });
    expect(await offered(ctx, ann)).toBe(false);
  });

  test('without Python the row says it is not installed, and no turn is offered the tool', async () => {
    const empty = mkdtempSync(join(root, 'no-pyodide-'));
    const { ctx, admin, ann } = await setup({ pyodideDir: empty });
    const row = await switchCode(ctx, admin, { enabled: true });
    expect(row).toMatchObject({ enabled: true, available: false, tools: [] });
    expect(row.unavailableReason).toBe(`The Python runtime is not installed: Pyodide is not installed in ${empty} (PARLEY_PYODIDE_DIR). To fix: point PARLEY_PYODIDE_DIR at Pyodide ${PYODIDE_VERSION}'s files, or unset it and copy the pyodide directory of Parley's release (or dist/pyodide of a build) beside the parley executable (docs/code-interpreter.md).`);
    expect(await offered(ctx, ann)).toBe(false);
  });
});

describe('the files a call keeps', () => {
  test('kept once when the call runs again (a restart between keeping them and recording its output)', async () => {
    const { ctx, ann } = await setup();
    const responseId = 'resp_restarted';
    const tool = runCodeTool(ctx.deps, { userId: ann.user.id, conversationId: 'none', responseId }, 'python');
    // The second run writes other bytes (a clock, a random number): the name and the call decide.
    const code = "import random\nopen('result.csv', 'w').write(f'n,{random.random()}\\n')\nprint('ok')";
    const events: AiEvent[] = [];
    const first = await tool.run({ code }, (e) => events.push(e), 'call_1', 'up_1:call_1');
    const again = await tool.run({ code }, (e) => events.push(e), 'call_1', 'up_1:call_1');
    const list = async () => (await ctx.json('files/listFiles', {}, ann)).body.files as { id: string; filename: string }[];
    const files = await list();
    expect(files.map((f) => f.filename)).toEqual(['result.csv']);
    const [done1, done2] = events.filter((e) => e.type === 'code_interpreter.completed') as any[];
    expect(done2.files).toEqual(done1.files);
    expect(again).toBe(first);

    // Another call of the same turn keeps its own.
    await tool.run({ code }, () => {}, 'call_2', 'up_1:call_2');
    expect((await list()).map((f) => f.filename)).toEqual(['result.csv', 'result.csv']);
    ctx.deps.sandboxes.endTurn(responseId);
  });

  test('a real restart in the window: the resumed turn runs the call again and answers with the file kept before', async () => {
    const responses: Partial<Config> = { codeInterpreter: true, aiProvider: 'openai-responses', aiApiKey: 'sk-test' };
    const dataDir = mkdtempSync(join(root, 'data-'));
    // The process "dies" right after the unit of work that keeps the file commits: nothing it
    // writes afterwards (the call's event and output) reaches the database.
    let dead = false;
    const dying = (store: Store): Partial<AppDeps> => {
      const never = new Promise<never>(() => {});
      const write: Store['write'] = async (work) => {
        if (dead) return never;
        const result = await store.write(work);
        if (result && typeof result === 'object' && 'file' in result && 'duplicates' in result) dead = true;
        return result;
      };
      return { store: { ...store, write, queued: (work) => (dead ? never : store.queued(work)) } };
    };
    const before = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { ...responses, dataDir, aiBaseUrl: openai.url }, durable: true, deps: dying });
    const ann = before.users[0]!;
    let turn = 0;
    const code = "import random\nopen('result.csv', 'w').write(f'n,{random.random()}\\n')\nprint('written')";
    openai.responsesScript = () => (turn++ === 0 ? functionCallEvents('call_c', 'run_python', { code }) : textEvents('Here it is.', 1));
    const reader = new SseReader(await before.call('chat/stream', { message: 'Write a CSV' }, ann));
    const head = await reader.until('response.created');
    // The call's events reach the stream with its output, after the run: none came before the end.
    while (!dead) await Bun.sleep(10);
    await reader.close();
    before.deps.sandboxes.closeAll();
    await before.close();

    const after = await createTestContext({ config: { ...responses, dataDir, aiBaseUrl: openai.url }, sameDatabaseAs: before });
    const files = async () => (await after.json('files/listFiles', {}, ann)).body.files as { id: string; filename: string }[];
    const [kept] = await files();
    expect(kept?.filename).toBe('result.csv');
    expect(await resumeInterruptedResponses(after.deps)).toEqual({ resumed: 1, failed: 0 });
    const rest = await readFrames(await after.call('chat/stream', { message: 'x' }, { 'x-api-key': ann.key, 'last-event-id': head.at(-1)!.id! }));
    const done = rest.find((f) => f.data.type === 'code_interpreter.completed')!.data;
    expect(done.files).toEqual([expect.objectContaining({ fileId: kept!.id, filename: 'result.csv' })]);
    expect((await files()).map((f) => f.id)).toEqual([kept!.id]);
    expect(rest.at(-1)!.data.type).toBe('done');
    after.deps.sandboxes.closeAll();
    await after.close();
  });
});
