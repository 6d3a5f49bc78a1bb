/**
 * The code interpreter (src/code/, docs/code-interpreter.md) end to end through HTTP: the fake
 * OpenAI chat server scripts the model's `run_python` calls, a real Pyodide child runs them. A
 * CSV attached to the chat summed with the standard library, the files code writes kept as the
 * user's, an exception as the tool's error, state kept between two calls of one turn, a missing
 * package's hint, and the hostile cases, each ending in a clear error with nothing leaking.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readFrames, typesOf } from './sse';
import { toolCallsThenAnswer, type ChatTurn } from './fakes/openai';
import { testConfig } from '../src/config';
import { checkPython } from '../src/code/python-check';
import { codeFrames, codeTurns, upload } from './support/code-turns';
import { PYODIDE_FILES, PYODIDE_VERSION } from '../src/code/pyodide-dir';

setDefaultTimeout(60_000);

const { openai, dirs, setup, chatRequests, toolOutputs, runOnce } = codeTurns();

describe('the code interpreter', () => {
  test('off by default: no run_python unless an admin (or PARLEY_CODE_INTERPRETER) turns it on (test/code-admin.test.ts)', async () => {
    const { ctx, ann } = await setup({ codeInterpreter: false });
    openai.chatScript = () => ({ deltas: [{ content: 'Hi.' }] });
    await readFrames(await ctx.call('chat/stream', { message: 'Hello' }, ann));
    expect(JSON.stringify(chatRequests()[0].tools ?? [])).not.toContain('run_python');
  });

  test('a CSV attached to the chat summed with the standard library: events, the model told, the answer keeps them', async () => {
    const { ctx, ann } = await setup();
    const csv = await upload(ctx, ann, 'item,price\napple,1.25\npear,2.50\nplum,3.00\n', 'prices.csv');
    const code = "import csv\nrows = list(csv.DictReader(open('/mnt/data/prices.csv')))\nprint(len(rows), 'rows')\nsum(float(r['price']) for r in rows)";
    const { frames, started, completed, told } = await runOnce(ctx, ann, code, [csv.id]);
    expect(typesOf(frames).filter((t) => t !== 'keepalive')).toEqual(['conversation.created', 'response.created', 'code_interpreter.in_progress', 'code_interpreter.completed', 'content_part.added', 'text.delta', 'done']);
    expect(started).toEqual({ type: 'code_interpreter.in_progress', itemId: 'call_1', language: 'python', code });
    expect(completed).toEqual({ type: 'code_interpreter.completed', itemId: 'call_1', language: 'python', output: '3 rows\n6.75', files: [] });
    expect(told).toContain('3 rows\n6.75');
    expect(JSON.stringify(chatRequests()[0].tools)).toContain('run_python');

    // A reloaded conversation shows the code and its output on the answer.
    const conversationId = frames[0]!.data.conversationId;
    const items = JSON.stringify((await ctx.json('chat/getConversation', { conversationId }, ann)).body);
    expect(items).toContain('code_interpreter.completed');
    expect(items).toContain('6.75');
  });

  test('files the code writes (a CSV, an SVG chart) become the user\'s files, listed in the event and downloadable', async () => {
    const { ctx, ann, bob } = await setup();
    const code = [
      "open('totals.csv', 'w').write('month,total\\njan,10\\nfeb,14\\n')",
      "bars = ''.join(f'<rect x=\"{i*30}\" y=\"{100-v}\" width=\"20\" height=\"{v}\"/>' for i, v in enumerate([10, 14]))",
      "open('chart.svg', 'w').write(f'<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\">{bars}</svg>')",
      "print('written')",
    ].join('\n');
    const { completed, told } = await runOnce(ctx, ann, code);
    const files = completed.files as { fileId: string; filename: string; contentType: string; size: number }[];
    expect(files.map((f) => f.filename).sort()).toEqual(['chart.svg', 'totals.csv']);
    const csv = files.find((f) => f.filename === 'totals.csv')!;
    expect(csv).toMatchObject({ contentType: 'text/csv', size: 'month,total\njan,10\nfeb,14\n'.length });
    expect(told).toContain(`totals.csv (file ${csv.fileId}`);
    const listed = (await ctx.json('files/listFiles', {}, ann)).body.files as any[];
    expect(listed.map((f) => f.id).sort()).toEqual(files.map((f) => f.fileId).sort());
    const res = await ctx.app.handle(new Request(`http://localhost/api/files/${csv.fileId}/content`, { headers: { 'x-api-key': ann.key } }));
    expect(await res.text()).toBe('month,total\njan,10\nfeb,14\n');
    expect((await ctx.json('files/listFiles', {}, bob)).body.files).toEqual([]);
  });

  test('an exception is the tool\'s error: its last lines to the model and on the event; the turn goes on', async () => {
    const { ctx, ann } = await setup();
    const { completed, told, frames } = await runOnce(ctx, ann, "print('before')\n{'a': 1}['b']");
    expect(completed.output).toBe('before\n');
    expect(completed.error).toContain("KeyError: 'b'");
    expect(completed.error).toContain('line 2');
    expect(completed.error).not.toContain('<parley>');
    expect(told).toContain("Error:\n");
    expect(told).toContain("KeyError: 'b'");
    expect(frames.some((f) => f.data.type === 'text.delta')).toBe(true);
  });

  test('state is kept between two calls of one turn; the next turn starts afresh', async () => {
    const { ctx, ann } = await setup();
    let round = 0;
    openai.chatScript = (): ChatTurn => {
      round++;
      if (round === 1) return { deltas: [{ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'run_python', arguments: JSON.stringify({ code: 'total = 41' }) } }] }], finish_reason: 'tool_calls' };
      if (round === 2) return { deltas: [{ tool_calls: [{ index: 0, id: 'c2', type: 'function', function: { name: 'run_python', arguments: JSON.stringify({ code: 'total + 1' }) } }] }], finish_reason: 'tool_calls' };
      return { deltas: [{ content: 'It is 42.' }] };
    };
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Count.' }, ann));
    const done = codeFrames(frames).filter((e) => e.type === 'code_interpreter.completed');
    expect(done.map((e) => e.output)).toEqual(['', '42']);

    const conversationId = frames[0]!.data.conversationId;
    const next = await runOnce(ctx, ann, 'total');
    expect(next.completed.error).toContain("NameError: name 'total' is not defined");
    expect(conversationId).toBeString();
  });

  test('a package that is not there: the error says how an admin adds one', async () => {
    const { ctx, ann } = await setup();
    const { completed } = await runOnce(ctx, ann, 'import numpy');
    expect(completed.error).toContain("ModuleNotFoundError: No module named 'numpy'");
    expect(completed.error).toContain('numpy is not installed on this server; an admin can add packages to PARLEY_PYODIDE_PACKAGES_DIR (docs/code-interpreter.md)');
  });

  test('PARLEY_PYODIDE_PACKAGES_DIR: a package its lock file names but whose wheel is missing fails the same way, quietly', async () => {
    const packages = mkdtempSync(join(tmpdir(), 'parley-pyodide-packages-'));
    dirs.push(packages);
    copyFileSync(join(dirname(Bun.resolveSync('pyodide/package.json', import.meta.dir)), 'pyodide-lock.json'), join(packages, 'pyodide-lock.json'));
    const { ctx, ann } = await setup({ pyodidePackagesDir: packages });
    const { completed } = await runOnce(ctx, ann, 'import numpy');
    expect(completed.output).toBe('');
    expect(completed.error).toContain('numpy is not installed on this server');
  });
});

describe('where Pyodide is: parley doctor and the tool\'s error', () => {
  /** A directory of Pyodide's files whose pyodide.asm.mjs says `version` (an older install's). */
  function pyodideCopy(version?: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'parley-pyodide-'));
    dirs.push(dir);
    const npm = dirname(Bun.resolveSync('pyodide/package.json', import.meta.dir));
    for (const f of PYODIDE_FILES) copyFileSync(join(npm, f), join(dir, f));
    if (version) writeFileSync(join(dir, 'pyodide.asm.mjs'), readFileSync(join(dir, 'pyodide.asm.mjs'), 'latin1').replace(/API\.version="[^"]+"/, `API.version="${version}"`), 'latin1');
    return dir;
  }

  test('doctor: ready (naming the directory and version), on or off, missing, incomplete, or stale after an upgrade', () => {
    expect(checkPython(testConfig({ codeInterpreter: false })).detail).toContain('standard library only), off (an admin turns it on in Admin → Tools);');
    const ready = checkPython(testConfig({ codeInterpreter: true }));
    expect(ready.detail).toStartWith(`Python ready (Pyodide ${PYODIDE_VERSION} in `);
    expect(ready.detail).toContain('the npm package; standard library only), on;');

    const empty = mkdtempSync(join(tmpdir(), 'parley-no-pyodide-'));
    dirs.push(empty);
    expect(checkPython(testConfig({ codeInterpreter: true, pyodideDir: empty }))).toMatchObject({
      status: 'fail',
      detail: `Pyodide is not installed in ${empty} (PARLEY_PYODIDE_DIR): run_python fails until it is there`,
      fix: expect.stringContaining(`point PARLEY_PYODIDE_DIR at Pyodide ${PYODIDE_VERSION}'s files`),
    });
    // Off by default, a missing Python only warns: nothing is broken until an admin wants it;
    // the admin's switch, where known (admin/doctor), over the setting's default.
    expect(checkPython(testConfig({ codeInterpreter: false, pyodideDir: empty })).status).toBe('warn');
    expect(checkPython(testConfig({ codeInterpreter: false, pyodideDir: empty }), true).status).toBe('fail');

    const partial = pyodideCopy();
    rmSync(join(partial, 'python_stdlib.zip'));
    expect(checkPython(testConfig({ codeInterpreter: true, pyodideDir: partial })).detail).toContain(`Pyodide in ${partial} (PARLEY_PYODIDE_DIR) lacks python_stdlib.zip`);

    const stale = pyodideCopy('0.26.4');
    expect(checkPython(testConfig({ codeInterpreter: true, pyodideDir: stale }))).toMatchObject({
      status: 'fail',
      detail: `${stale} (PARLEY_PYODIDE_DIR) holds Pyodide 0.26.4; this Parley needs ${PYODIDE_VERSION}: run_python fails until it is there`,
    });
    expect(checkPython(testConfig({ codeInterpreter: true, pyodideDir: pyodideCopy() })).detail).toStartWith(`Python ready (Pyodide ${PYODIDE_VERSION} in `);
  });

  test('with Pyodide missing the server still answers: no turn is offered run_python, and a call already made when it goes ends with the tool\'s error saying why and who can fix it', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'parley-no-pyodide-'));
    dirs.push(empty);
    const missing = await setup({ pyodideDir: empty });
    openai.chatScript = () => ({ deltas: [{ content: 'Hi.' }] });
    const answered = await readFrames(await missing.ctx.call('chat/stream', { message: 'Hello' }, missing.ann));
    expect(answered.at(-1)!.data.type).toBe('done');
    expect(JSON.stringify(chatRequests().at(-1).tools ?? [])).not.toContain('run_python');

    // Offered while the directory was there; gone (an upgrade half done) before the call ran.
    const copy = pyodideCopy();
    const { ctx, ann } = await setup({ pyodideDir: copy });
    const script = toolCallsThenAnswer([{ id: 'call_1', name: 'run_python', args: { code: '1 + 1' } }], 'Done.');
    openai.chatScript = () => {
      rmSync(join(copy, 'pyodide.asm.wasm'), { force: true });
      return script();
    };
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Run it.' }, ann));
    expect(frames.at(-1)!.data.type).toBe('done');
    const [, completed] = codeFrames(frames);
    const why = `Python is not available on this server: Pyodide in ${copy} (PARLEY_PYODIDE_DIR) lacks pyodide.asm.wasm. An admin can fix it: \`parley doctor\` says how.`;
    expect(completed.error).toBe(why);
    expect(toolOutputs()[0]).toContain(why);
  });
});

describe('hostile code ends in a clear error, nothing leaking', () => {
  test('an infinite loop is stopped at PARLEY_CODE_TIMEOUT_S; the turn\'s next call gets a fresh interpreter', async () => {
    const { ctx, ann } = await setup({ codeTimeoutS: 2 });
    openai.chatScript = toolCallsThenAnswer(
      [
        { id: 'loop', name: 'run_python', args: { code: 'x = 1\nwhile True:\n    pass' } },
        { id: 'after', name: 'run_python', args: { code: "print('still here')\nx" } },
      ],
      'Done.',
    );
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Loop.' }, ann));
    const [loop, after] = codeFrames(frames).filter((e) => e.type === 'code_interpreter.completed');
    expect(loop.error).toBe('The code ran longer than 2 s (PARLEY_CODE_TIMEOUT_S) and was stopped.');
    expect(after.output).toBe('still here\n');
    expect(after.error).toContain("NameError: name 'x' is not defined");
    const [toldLoop, toldAfter] = toolOutputs();
    expect(toldLoop).toContain('ran longer than 2 s');
    expect(toldAfter).toStartWith('(The interpreter was started afresh: names defined by earlier calls are gone.)');
  });

  test('a memory bomb is stopped at PARLEY_CODE_MEMORY_MB', async () => {
    const { ctx, ann } = await setup({ codeMemoryMb: 250 });
    const { completed } = await runOnce(ctx, ann, "blocks = []\nwhile True:\n    blocks.append(bytearray(8 * 1024 * 1024))");
    expect(completed.error).toMatch(/^(The code used more than 250 MB of memory \(PARLEY_CODE_MEMORY_MB\) and was stopped\.|[\s\S]*MemoryError[\s\S]*)$/);
  });

  test('no processes, no threads, no sockets, no way to JavaScript', async () => {
    const { ctx, ann } = await setup();
    const cases: [string, string][] = [
      ['import os\nos.fork()', 'OSError'],
      ['import subprocess\nsubprocess.run(["ls"])', 'OSError'],
      ['import threading\nfor _ in range(1000):\n    threading.Thread(target=lambda: None).start()', "RuntimeError: can't start new thread"],
      ['import socket\nsocket.create_connection(("127.0.0.1", 80))', 'PermissionError'],
      ['import js\njs.fetch("http://127.0.0.1/")', 'The module js is not available in this sandbox'],
      ['from pyodide.ffi import to_js', 'The module pyodide is not available in this sandbox'],
      ['from pyodide.http import pyfetch', 'The module pyodide is not available in this sandbox'],
      ['import pyodide_js', 'The module pyodide_js is not available in this sandbox'],
      ['import urllib.request\nurllib.request.urlopen("http://127.0.0.1/")', 'Error'],
      // Pyodide's API object reached past the import block (through the garbage collector): empty.
      ['import gc\nf = [o for o in gc.get_objects() if type(o).__name__ == "JsFinder"][0]\nf.jsproxies["pyodide_js"].FS.createPreloadedFile("/mnt/data", "pw", "/etc/passwd", True, False)', 'AttributeError: FS'],
    ];
    // One turn, one interpreter: each call fails on its own and the next still runs.
    openai.chatScript = toolCallsThenAnswer(cases.map(([code], i) => ({ id: `h${i}`, name: 'run_python', args: { code } })), 'Done.');
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Try.' }, ann));
    const errors = codeFrames(frames).filter((e) => e.type === 'code_interpreter.completed').map((e) => e.error);
    expect(errors).toHaveLength(cases.length);
    for (const [i, [code, expected]] of cases.entries()) expect({ code, error: errors[i] }).toEqual({ code, error: expect.stringContaining(expected) });
  });

  test('the host\'s files are out of reach: /etc/passwd, the data directory, another user\'s file; writes stay in the sandbox', async () => {
    const { ctx, ann, bob } = await setup();
    await upload(ctx, bob, 'secret,1\n', 'bobs.csv');
    const mine = await upload(ctx, ann, 'a,1\n', 'mine.csv');
    const outside = join(tmpdir(), `parley-code-escape-${Date.now()}`);
    const code = [
      'import os',
      "found = []",
      "for p in ['/etc/passwd', " + JSON.stringify(join(ctx.deps.config.dataDir, 'parley.db')) + "]:",
      '    try:',
      '        open(p).read(); found.append(p)',
      '    except OSError:',
      '        pass',
      `os.makedirs(${JSON.stringify(join(outside, '..'))}, exist_ok=True)`,
      `open(${JSON.stringify(outside)}, 'w').write('x')`,
      "print(sorted(os.listdir('/mnt/data')), found)",
    ].join('\n');
    const { completed } = await runOnce(ctx, ann, code, [mine.id]);
    expect(completed.error).toBeUndefined();
    expect(completed.output).toBe("['mine.csv'] []\n");
    expect(existsSync(outside)).toBe(false);
  });
});
