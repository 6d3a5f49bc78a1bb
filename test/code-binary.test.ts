/**
 * The code interpreter through the compiled binary (docs/code-interpreter.md): Pyodide from the
 * `pyodide` directory scripts/build.ts writes beside the executable, in `parley sandbox`
 * children. A CSV attached to the chat summed with the standard library and a chart written as
 * the user's file; then four sandboxes at once, each running hostile code, with the server's peak
 * RSS within its 300 MB budget and no child left behind. Both stores (PARLEY_TEST_STORE=pg).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { memoryOf, startBinaryServer, type BinaryServer } from './support/binary-server';
import { startFakeOpenAI, type ChatTurn } from './fakes/openai';
import { readFrames } from './sse';

setDefaultTimeout(300_000);

const openai = startFakeOpenAI();
const USERS = ['bob@example.org', 'cy@example.org', 'dee@example.org'];
let server: BinaryServer;
beforeAll(async () => {
  server = await startBinaryServer(
    {
      PARLEY_AI_PROVIDER: 'openai-chat',
      PARLEY_AI_BASE_URL: openai.url,
      PARLEY_AI_MODEL: 'small',
      PARLEY_CODE_INTERPRETER: 'true',
      PARLEY_CODE_MAX_SANDBOXES: '4',
      PARLEY_CODE_TIMEOUT_S: '8',
      PARLEY_CODE_MEMORY_MB: '300',
    },
    USERS,
  );
});
afterAll(async () => {
  await server?.stop();
  openai.stop();
});

/** The model calls run_python (run_javascript for a key starting `js`) with the code the user's message names (`code:<key>`), then answers with the tool's output. */
const CODES: Record<string, string> = {};
openai.chatScript = (body: any): ChatTurn => {
  const last = body.messages.at(-1);
  if (last.role === 'tool') return { deltas: [{ content: `Ran: ${String(last.content).slice(0, 200)}` }] };
  const key = /code:(\w+)/.exec(JSON.stringify(last.content))![1]!;
  return { deltas: [{ tool_calls: [{ index: 0, id: `call_${key}`, type: 'function', function: { name: key.startsWith('js') ? 'run_javascript' : 'run_python', arguments: JSON.stringify({ code: CODES[key] }) } }] }], finish_reason: 'tool_calls' };
};

async function chat(email: string | undefined, key: string, code: string, files: string[] = []) {
  CODES[key] = code;
  const body = { message: `Please run code:${key}`, ...(files.length ? { files } : {}) };
  const res = email ? await server.postAs(email, 'chat/stream', body) : await server.post('chat/stream', body);
  const frames = await readFrames(res);
  expect(frames.at(-1)!.data.type).toBe('done');
  return frames.map((f) => f.data).find((e) => e.type === 'code_interpreter.completed')!;
}

const childrenOf = (pid: number) =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === String(pid);
      } catch {
        return false;
      }
    });

describe('the code interpreter in the compiled binary', () => {
  test('a CSV attached to the chat summed with the standard library; a chart written becomes the user\'s file', async () => {
    const form = new FormData();
    form.append('file', new Blob(['region,sales\nnorth,120\nsouth,80\neast,55\n']), 'sales.csv');
    const csv = (await (await fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': server.key }, body: form })).json()) as { id: string };
    const code = [
      'import csv',
      "rows = list(csv.DictReader(open('/mnt/data/sales.csv')))",
      "total = sum(int(r['sales']) for r in rows)",
      "open('chart.svg', 'w').write('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><rect width=\"5\" height=\"5\"/></svg>')",
      'total',
    ].join('\n');
    const done = await chat(undefined, 'sum', code, [csv.id]);
    expect(done.output).toBe('255');
    expect(done.error).toBeUndefined();
    expect(done.files).toEqual([{ fileId: expect.any(String), filename: 'chart.svg', contentType: expect.any(String), size: expect.any(Number) }]);
    const res = await fetch(`${server.url}/api/files/${done.files[0].fileId}/content`, { headers: { 'x-api-key': server.key } });
    expect(await res.text()).toContain('<svg');
  });

  test('JavaScript: the CSV summed with QuickJS embedded in the executable, a file written becomes the user\'s; a memory bomb stopped at its own limit', async () => {
    const form = new FormData();
    form.append('file', new Blob(['region,sales\nnorth,120\nsouth,80\neast,55\n']), 'sales.csv');
    const csv = (await (await fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': server.key }, body: form })).json()) as { id: string };
    const code = "const total = fs.readFile('sales.csv').trim().split('\\n').slice(1).reduce((n, l) => n + Number(l.split(',')[1]), 0);\nfs.writeFile('total.txt', String(total));\ntotal";
    const done = await chat(undefined, 'jsSum', code, [csv.id]);
    expect(done).toMatchObject({ language: 'javascript', output: '255', files: [{ filename: 'total.txt', size: 3 }] });
    expect(done.error).toBeUndefined();
    const bomb = await chat(undefined, 'jsBomb', "const b = [];\nwhile (true) b.push(new Float64Array(1e6))");
    expect(bomb.error).toStartWith('The code used more than 75 MB of JavaScript memory and was stopped.');
  });

  test('four sandboxes at once, each hostile: clear errors, the server within 300 MB, no child left', async () => {
    const cases: [string | undefined, string, string, RegExp][] = [
      [undefined, 'loop', 'while True:\n    pass', /ran longer than 8 s/],
      [USERS[0], 'memory', 'blocks = []\nwhile True:\n    blocks.append(bytearray(8 * 1024 * 1024))', /more than 300 MB|MemoryError/],
      [USERS[1], 'net', 'import socket\nsocket.create_connection(("127.0.0.1", 80))', /PermissionError/],
      [USERS[2], 'files', "open('/etc/passwd').read()", /FileNotFoundError/],
    ];
    const results = await Promise.all(cases.map(([email, key, code]) => chat(email, key, code)));
    for (const [i, [, key, , expected]] of cases.entries()) expect({ key, error: results[i]!.error }).toEqual({ key, error: expect.stringMatching(expected) });
    const { hwm } = memoryOf(server.pid);
    console.log(`server peak RSS with four sandboxes: ${hwm.toFixed(0)} MB`);
    expect(hwm).toBeLessThan(300);
    // The turns ended: their sandboxes with them.
    for (let i = 0; i < 50 && childrenOf(server.pid).length; i++) await Bun.sleep(100);
    expect(childrenOf(server.pid)).toEqual([]);
  });
});
