/**
 * `run_javascript` (src/code/javascript-runner.ts, docs/code-interpreter.md, "JavaScript") end to
 * end through HTTP: QuickJS in the turn's sandbox child, beside Python. A CSV attached to the chat
 * summed, a file written kept as the user's (and read by Python in the same turn), an exception
 * as the tool's error, state kept between two calls of one turn, and hostile code — a loop, memory
 * bombs, deep recursion, the host's APIs, paths outside the scratch space — each a clear error
 * with the server alive and nothing leaking.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFrames, SseReader } from './sse';
import { updateUser } from '../src/account/account.store';
import { toolCallsThenAnswer } from './fakes/openai';
import { codeFrames, codeTurns, upload } from './support/code-turns';

setDefaultTimeout(60_000);

const { openai, setup, chatRequests, toolOutputs, runOnce } = codeTurns();
const runJs = (...args: Parameters<typeof runOnce>) => runOnce(args[0], args[1], args[2], args[3] ?? [], 'run_javascript');

/** One turn whose model makes these calls, in order; the completed events. */
async function turn(ctx: Awaited<ReturnType<typeof setup>>['ctx'], as: Awaited<ReturnType<typeof setup>>['ann'], calls: [string, string][], files: string[] = []) {
  openai.chatScript = toolCallsThenAnswer(calls.map(([name, code], i) => ({ id: `c${i}`, name, args: { code } })), 'Done.');
  const frames = await readFrames(await ctx.call('chat/stream', { message: 'Run them.', ...(files.length ? { files } : {}) }, as));
  expect(frames.at(-1)!.data.type).toBe('done');
  return codeFrames(frames).filter((e) => e.type === 'code_interpreter.completed');
}

describe('run_javascript', () => {
  test('a CSV attached to the chat summed in JavaScript: events with language javascript, the model told, the answer keeps them', async () => {
    const { ctx, ann } = await setup();
    const csv = await upload(ctx, ann, 'item,price\napple,1.25\npear,2.50\nplum,3.00\n', 'prices.csv');
    const code = "const rows = fs.readFile('/mnt/data/prices.csv').trim().split('\\n').slice(1).map((l) => l.split(','));\nconsole.log(rows.length, 'rows');\nrows.reduce((n, r) => n + Number(r[1]), 0)";
    const { frames, started, completed, told } = await runJs(ctx, ann, code, [csv.id]);
    expect(started).toEqual({ type: 'code_interpreter.in_progress', itemId: 'call_1', language: 'javascript', code });
    expect(completed).toEqual({ type: 'code_interpreter.completed', itemId: 'call_1', language: 'javascript', output: '3 rows\n6.75', files: [] });
    expect(told).toContain('3 rows\n6.75');
    const tools = chatRequests()[0].tools.map((t: any) => t.function.name);
    expect(tools).toEqual(expect.arrayContaining(['run_python', 'run_javascript']));

    const conversationId = frames[0]!.data.conversationId;
    const items = JSON.stringify((await ctx.json('chat/getConversation', { conversationId }, ann)).body);
    expect(items).toContain('"language":"javascript"');
    expect(items).toContain('6.75');
  });

  test('a file written under /mnt/data becomes the user\'s, downloadable; Python reads it in the same turn', async () => {
    const { ctx, ann, bob } = await setup();
    const [js, py] = await turn(ctx, ann, [
      ['run_javascript', "fs.writeFile('totals.csv', 'month,total\\njan,10\\nfeb,14\\n'); fs.writeFile('bytes.bin', new Uint8Array([1, 2, 3])); fs.listdir()"],
      ['run_python', "open('/mnt/data/totals.csv').read().count('\\n')"],
    ]);
    expect(js!.error).toBeUndefined();
    expect(js!.output).toBe('["bytes.bin","totals.csv"]');
    const csv = js!.files.find((f: any) => f.filename === 'totals.csv');
    expect(csv).toMatchObject({ contentType: 'text/csv', size: 'month,total\njan,10\nfeb,14\n'.length });
    expect(py!.output).toBe('3');
    expect(py!.files).toEqual([]);
    const res = await ctx.app.handle(new Request(`http://localhost/api/files/${csv.fileId}/content`, { headers: { 'x-api-key': ann.key } }));
    expect(await res.text()).toBe('month,total\njan,10\nfeb,14\n');
    expect(toolOutputs()[0]).toContain(`totals.csv (file ${csv.fileId}`);
    const listed = (await ctx.json('files/listFiles', {}, ann)).body.files as any[];
    expect(listed.map((f) => f.filename).sort()).toEqual(['bytes.bin', 'totals.csv']);
    expect((await ctx.json('files/listFiles', {}, bob)).body.files).toEqual([]);
  });

  test('an exception is the tool\'s error: its name, message and line; what was printed before stays', async () => {
    const { ctx, ann } = await setup();
    const { completed, told, frames } = await runJs(ctx, ann, "console.log('before');\nconst o = null;\no.x");
    expect(completed.output).toBe('before\n');
    expect(completed.error).toContain("TypeError: cannot read property 'x' of null");
    expect(completed.error).toContain('code.js:3');
    expect(completed.error).not.toContain('parley.js');
    expect(told).toContain('Error:\nTypeError');
    expect(frames.some((f) => f.data.type === 'text.delta')).toBe(true);
  });

  test('state is kept between two calls of one turn (a promise\'s value too); the next turn starts afresh', async () => {
    const { ctx, ann } = await setup();
    const done = await turn(ctx, ann, [
      ['run_javascript', 'let total = 41; function twice(n) { return 2 * n }'],
      ['run_javascript', 'Promise.resolve(twice(total + 1) / 2)'],
    ]);
    expect(done.map((e) => [e.output, e.error])).toEqual([['', undefined], ['42', undefined]]);
    const next = await runJs(ctx, ann, 'total');
    expect(next.completed.error).toContain("ReferenceError: 'total' is not defined");
  });
});

describe('without Python', () => {
  test('a server whose PARLEY_PYODIDE_DIR lacks Pyodide offers neither tool: JavaScript runs in Python\'s sandbox', async () => {
    const { ctx, ann } = await setup({ pyodideDir: tmpdir() });
    openai.chatScript = () => ({ deltas: [{ content: 'Hi.' }] });
    await readFrames(await ctx.call('chat/stream', { message: 'Hello' }, ann));
    expect((chatRequests()[0].tools ?? []).map((t: any) => t.function.name).filter((n: string) => n.startsWith('run_'))).toEqual([]);
  });
});

describe('the tool registry\'s switches, as for run_python', () => {
  test('source code per tier and off turn both tools off; run_javascript marked ask first waits for the user', async () => {
    const { ctx, ann, bob } = await setup();
    const admin = ann;
    await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
    await ctx.store.write((tx) => updateUser(tx, bob.user.id, { subscriptionTier: 'PRO' }, Date.now()));
    const offered = async (as: typeof ann) => {
      openai.requests.length = 0;
      openai.chatScript = () => ({ deltas: [{ content: 'Hi.' }] });
      await readFrames(await ctx.call('chat/stream', { message: 'Hello' }, as));
      return (chatRequests()[0].tools ?? []).map((t: any) => t.function.name).filter((n: string) => n.startsWith('run_'));
    };
    expect(await offered(ann)).toEqual(['run_python', 'run_javascript']);
    expect((await ctx.json('admin/setToolSettings', { sources: [{ id: 'code', tiers: ['PRO'] }] }, admin)).status).toBe(200);
    expect(await offered(ann)).toEqual([]);
    expect(await offered(bob)).toEqual(['run_python', 'run_javascript']);
    await ctx.json('admin/setToolSettings', { sources: [{ id: 'code', tiers: null, enabled: false }] }, admin);
    expect(await offered(bob)).toEqual([]);

    await ctx.json('admin/setToolSettings', { sources: [{ id: 'code', enabled: true }], tools: [{ name: 'run_javascript', approval: 'ask' }] }, admin);
    openai.chatScript = toolCallsThenAnswer([{ id: 'j1', name: 'run_javascript', args: { code: '6 * 7' } }], 'Done.');
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'Run it.' }, ann));
    const head = await reader.until('tool_call.approval_required');
    expect(head.at(-1)!.data).toMatchObject({ type: 'tool_call.approval_required', itemId: 'j1', name: 'run_javascript', arguments: { code: '6 * 7' } });
    expect(head.some((f) => f.data.type.startsWith('code_interpreter.'))).toBe(false);
    expect((await ctx.json('chat/approveToolCall', { responseId: head[1]!.data.responseId, itemId: 'j1', decision: 'approve' }, ann)).status).toBe(200);
    const rest = await reader.until('done');
    expect(codeFrames(rest).at(-1)).toMatchObject({ type: 'code_interpreter.completed', language: 'javascript', output: '42' });
    await reader.close();
  });
});

describe('hostile JavaScript ends in a clear error, the server alive, nothing leaking', () => {
  test('an infinite loop is stopped at PARLEY_CODE_TIMEOUT_S; the names defined before it stay', async () => {
    const { ctx, ann } = await setup({ codeTimeoutS: 2 });
    const [loop, after] = await turn(ctx, ann, [
      ['run_javascript', 'var x = 1;\nwhile (true) {}'],
      ['run_javascript', "console.log('still here'); x"],
    ]);
    expect(loop!.error).toBe('The code ran longer than 2 s (PARLEY_CODE_TIMEOUT_S) and was stopped.');
    expect(after).toMatchObject({ output: 'still here\n1' });
    expect(after!.error).toBeUndefined();
  });

  test('memory bombs (an array, a string) and deep recursion (in code, in a built-in) stop at QuickJS\'s own limits; the sandbox goes on', async () => {
    const { ctx, ann } = await setup();
    const [array, string, doubled, recursion, after, native, fresh] = await turn(ctx, ann, [
      ['run_javascript', "var lost = 1;\nconst blocks = [];\nwhile (true) blocks.push(new Array(1e6).fill('x'))"],
      ['run_javascript', "typeof lost + ' ' + 'x'.repeat(200 * 1024 * 1024).length"],
      ['run_javascript', "let s = 'x';\nwhile (true) s += s"],
      ['run_javascript', 'var kept = 7;\nfunction down(n) { return down(n + 1) + 1 }\ndown(0)'],
      ['run_javascript', 'typeof lost + " " + kept * 6'],
      ['run_javascript', 'var nested = [];\nfor (let i = 0; i < 1e6; i++) nested = [nested];\nJSON.stringify(nested).length'],
      ['run_javascript', 'typeof nested + " " + typeof kept'],
    ]);
    // Its WebAssembly memory cannot grow past the limit: the interpreter is dropped, the next starts afresh.
    const memory = 'The code used more than 80 MB of JavaScript memory and was stopped. JavaScript starts afresh at the next call: names defined by earlier calls are gone.';
    expect([array!.error, string!.error]).toEqual([memory, memory]);
    // Concatenation makes ropes: the string's length gives out before the memory.
    expect(doubled!.error).toStartWith('InternalError: string too long');
    expect(recursion!.error).toStartWith('InternalError: stack overflow (the recursion is too deep for this sandbox)');
    // A stack overflow leaves the interpreter and its names; the memory bombs took `lost` with them.
    expect(after).toMatchObject({ output: '"undefined 42"' });
    // Native recursion past the host's own stack: that interpreter goes, the next call starts afresh.
    expect(native!.error).toStartWith('The code broke the JavaScript interpreter (Maximum call stack size exceeded.) and was stopped');
    expect(native!.error).toEndWith('JavaScript starts afresh at the next call: names defined by earlier calls are gone.');
    expect(fresh).toMatchObject({ output: '"undefined undefined"' });
    // The child itself was never killed.
    expect(toolOutputs().join('\n')).not.toContain('started afresh');
  });

  test('the host\'s APIs are absent: fetch, require, process, Bun, import() each a clear error', async () => {
    const { ctx, ann } = await setup();
    const cases: [string, string][] = [
      ["fetch('http://127.0.0.1/')", "ReferenceError: 'fetch' is not defined"],
      ["require('fs')", "ReferenceError: 'require' is not defined"],
      ['process.exit(1)', "ReferenceError: 'process' is not defined"],
      ["Bun.file('/etc/passwd')", "ReferenceError: 'Bun' is not defined"],
      ["import('node:fs')", "could not load module 'node:fs'"],
      ["import fs from 'fs'", "could not load module 'fs'"],
      ["new Function('return this')().process.env", "cannot read property 'env' of undefined"],
      ['[typeof globalThis.fetch, typeof XMLHttpRequest, typeof WebSocket, typeof setTimeout, typeof Deno]', ''],
    ];
    const done = await turn(ctx, ann, cases.map(([code]) => ['run_javascript', code]));
    expect(done).toHaveLength(cases.length);
    for (const [i, [code, expected]] of cases.entries().filter(([, [, e]]) => e)) expect({ code, error: done[i]!.error }).toEqual({ code, error: expect.stringContaining(expected) });
    for (const e of done.slice(0, 6)) expect(e.error).toContain('This sandbox runs plain JavaScript (QuickJS): no modules, network, timers, Node or Bun');
    expect(done.at(-1)!.output).toBe('["undefined","undefined","undefined","undefined","undefined"]');
  });

  test('memory bombs again and again in one turn: each stopped at its own limit, the child never killed', async () => {
    const { ctx, ann } = await setup();
    const bomb = 'const b = [];\nwhile (true) b.push(new Float64Array(1e6))';
    const done = await turn(ctx, ann, [...Array.from({ length: 5 }, (): [string, string] => ['run_javascript', bomb]), ['run_javascript', '1 + 1']]);
    for (const e of done.slice(0, 5)) expect(e.error).toStartWith('The code used more than 80 MB of JavaScript memory and was stopped.');
    expect(done.at(-1)).toMatchObject({ output: '2' });
    expect(toolOutputs().join('\n')).not.toContain('started afresh');
  });

  test('files outside /mnt/data are out of reach: the host\'s, the server\'s data, another user\'s; nothing written outside', async () => {
    const { ctx, ann, bob } = await setup();
    await upload(ctx, bob, 'secret,1\n', 'bobs.csv');
    const mine = await upload(ctx, ann, 'a,1\n', 'mine.csv');
    const outside = join(tmpdir(), `parley-js-escape-${Date.now()}`);
    const paths = ['/etc/passwd', join(ctx.deps.config.dataDir, 'parley.db'), '/mnt/data/../../etc/passwd', 'bobs.csv'];
    const done = await turn(ctx, ann, [
      ...paths.map((p): [string, string] => ['run_javascript', `fs.readFile(${JSON.stringify(p)})`]),
      ['run_javascript', `fs.writeFile(${JSON.stringify(outside)}, 'x')`],
      ['run_javascript', "fs.writeFile('../escape.txt', 'x')"],
      ['run_javascript', 'fs.listdir()'],
    ], [mine.id]);
    for (const e of done.slice(0, 3)) expect(e.error).toStartWith('Error: Only files under /mnt/data can be read or written in this sandbox');
    expect(done[3]!.error).toStartWith('Error: ENOENT: no such file or directory, /mnt/data/bobs.csv');
    expect(done[4]!.error).toStartWith('Error: Only files under /mnt/data');
    expect(done[5]!.error).toStartWith('Error: Only files under /mnt/data');
    expect(done[6]!.output).toBe('["mine.csv"]');
    expect(existsSync(outside)).toBe(false);
    // The server is alive and well after all of it.
    const again = await runJs(ctx, ann, "'ok'", [mine.id]);
    expect(again.completed.output).toBe('"ok"');
  });

  test('a file bigger than the scratch space is refused by fs.writeFile, nothing kept', async () => {
    const { ctx, ann } = await setup({ codeScratchMb: 1 });
    const { completed } = await runJs(ctx, ann, "fs.writeFile('big.txt', 'x'.repeat(2 * 1024 * 1024))");
    expect(completed.error).toStartWith('Error: The files in /mnt/data would hold more than the 1048576 bytes this sandbox has: /mnt/data/big.txt was not written.');
    expect(completed.files).toEqual([]);
  });
});
