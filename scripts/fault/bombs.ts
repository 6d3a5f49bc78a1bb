// Memory bombs: costly JSON bodies and decompression-bomb images against a server on default
// settings, watching its memory and its health answer. The figure the hardening work promises:
// the server's peak RSS while these run stays under --max-rss-mb (300 by default).
//
//   bun run scripts/fault/bombs.ts [--binary PATH | --from-source] [--max-rss-mb 300] [--max-health-ms 2000] [--parallel 4] [--only TEXT]
//
// Hostile code (the code interpreter, docs/code-interpreter.md) goes as four chat turns at once,
// each running it through a fake model's run_python (or run_javascript) call.
// Every body goes four at once (--parallel) to the operation with the largest body limit that
// takes it, at each size up to the server's default limit. Uploads (files/upload) go as a case
// says: one file, an image beside a document (until the document's text is read), four at once;
// recordings (audio/transcribe) go more at once than a slow local fake speech server answers.
// --only runs the cases whose name contains TEXT. The script prints a JSON report and
// exits non-zero when the peak or the slowest health answer passes its bound, a request got a 5xx, or the server died.
// Listens on 127.0.0.1 only; every loop is bounded.
import { useRunTempDir } from '../lib/run-temp-dir';
import { buildBinary, createUserWithKey, flag, newDataDir, sourceCmd, startServer } from './harness';
import { startFakeAudio } from '../../test/fakes/openai-audio';
import { startFakeOpenAI, type ChatTurn } from '../../test/fakes/openai';
import { animatedGifBomb, costlyJsonShapes, dataUrl, gifBomb, heavyDocx, iccpBomb, itxtBomb, png, ztxtBomb } from '../lib/hostile-payloads';

useRunTempDir('parley-bombs-run', { keepOnFailure: true });
const maxRssMb = Number(flag('max-rss-mb', '300'));
// A loose bound: the event loop must never stall for long, whatever a body or an image holds.
const maxHealthMs = Number(flag('max-health-ms', '2000'));
const parallel = Number(flag('parallel', '4'));
const only = flag('only', '');
const cmd = Bun.argv.includes('--from-source') ? sourceCmd() : flag('binary', '') ? [flag('binary', '')] : buildBinary();
const dataDir = newDataDir('parley-bombs');
const key = createUserWithKey(cmd, dataDir, 'bombs@example.org');
// A speech-to-text server that takes its time, as a model at work does, so that recordings pile
// up in Parley while it works: the one setting off its default.
const stt = startFakeAudio();
stt.transcribeDelayMs = 2000;
stt.transcriptions.push = () => 0; // nobody reads them here; keep this process's memory flat
// A model that runs the code a message names (`code:<n>`) with the code interpreter, then answers.
const model = startFakeOpenAI();
const CODE_BOMBS: { name: string; code: string; tool?: 'run_javascript' }[] = [
  { name: 'an infinite loop', code: 'while True:\n    pass' },
  { name: 'a memory bomb', code: 'blocks = []\nwhile True:\n    blocks.append(bytearray(8 * 1024 * 1024))' },
  { name: 'a thread bomb', code: 'import threading\nwhile True:\n    threading.Thread(target=lambda: None).start()' },
  { name: 'a fork bomb', code: 'import os\nwhile True:\n    os.fork()' },
  { name: 'a socket', code: 'import socket\nsocket.create_connection(("127.0.0.1", 80))' },
  { name: 'reading /etc/passwd', code: "open('/etc/passwd').read()" },
  { name: 'writing outside the scratch space', code: "import os\nos.makedirs('/var/lib/parley', exist_ok=True)\nopen('/var/lib/parley/x', 'w').write('x' * 10**8)" },
  { name: 'fetch through the FFI', code: 'import js\njs.fetch("http://127.0.0.1/")' },
  { name: 'JavaScript: an infinite loop', code: 'while (true) {}', tool: 'run_javascript' },
  { name: 'JavaScript: a memory bomb', code: 'const b = [];\nwhile (true) b.push(new Float64Array(1e6))', tool: 'run_javascript' },
  { name: 'JavaScript: nesting past the stack', code: 'let a = [];\nfor (let i = 0; i < 1e6; i++) a = [a];\nJSON.stringify(a)', tool: 'run_javascript' },
  { name: 'JavaScript: writing outside the scratch space', code: "fs.writeFile('/var/lib/parley/x', 'x'.repeat(1e8))", tool: 'run_javascript' },
];
model.chatScript = (body: any): ChatTurn => {
  const last = body.messages.at(-1);
  if (last.role === 'tool') return { deltas: [{ content: 'Ran it.' }] };
  const n = Number(/code:(\d+)/.exec(JSON.stringify(last.content))?.[1] ?? 0);
  return { deltas: [{ tool_calls: [{ index: 0, id: `bomb_${n}`, type: 'function', function: { name: CODE_BOMBS[n]!.tool ?? 'run_python', arguments: JSON.stringify({ code: CODE_BOMBS[n]!.code }) } }] }], finish_reason: 'tool_calls' };
};
const server = await startServer(cmd, dataDir, {
  PARLEY_STT_BASE_URL: stt.url,
  PARLEY_AI_PROVIDER: 'openai-chat',
  PARLEY_AI_BASE_URL: model.url,
  PARLEY_AI_MODEL: 'small',
  PARLEY_CODE_INTERPRETER: 'true',
});

const kb = (line: string | undefined) => Number(line?.match(/(\d+)\s*kB/)?.[1] ?? 0) / 1024;
const status = async () => {
  const text = await Bun.file(`/proc/${server.pid}/status`).text();
  return { rss: kb(text.match(/^VmRSS:.*$/m)?.[0]), hwm: kb(text.match(/^VmHWM:.*$/m)?.[0]) };
};

// Sample memory and the health answer throughout, so a spike between requests is seen too.
let peakRss = 0;
let worstHealthMs = 0;
// The same two figures for the case under way, reset as each case starts.
let casePeakRss = 0;
let caseWorstHealthMs = 0;
let healthFailures = 0;
let sampling = false;
const sample = async () => {
  while (sampling) {
    const { rss } = await status().catch(() => ({ rss: 0 }));
    peakRss = Math.max(peakRss, rss);
    casePeakRss = Math.max(casePeakRss, rss);
    await Bun.sleep(10);
  }
};
const probe = async () => {
  while (sampling) {
    const started = performance.now();
    try {
      const res = await fetch(`${server.url}/api/health`, { signal: AbortSignal.timeout(30_000) });
      if (res.status !== 200) healthFailures++;
      await res.arrayBuffer();
    } catch {
      healthFailures++;
    }
    worstHealthMs = Math.max(worstHealthMs, performance.now() - started);
    caseWorstHealthMs = Math.max(caseWorstHealthMs, performance.now() - started);
    await Bun.sleep(50);
  }
};

interface CaseResult {
  name: string;
  statuses: number[];
  ms: number;
  /** The server's RSS as the case started: what earlier cases left behind. */
  startRssMb: number;
  peakRssMb: number;
  worstHealthMs: number;
}
const cases: CaseResult[] = [];

/** One case: `requests` at once, then whatever `after` waits for, with the case's own peak and health figures. */
async function run(name: string, requests: (() => Promise<number>)[], after?: () => Promise<void>) {
  const started = performance.now();
  const startRssMb = Math.round((await status()).rss);
  casePeakRss = 0;
  caseWorstHealthMs = 0;
  const statuses = await Promise.all(requests.map((request) => request().catch(() => 0)));
  await after?.();
  // One more health answer after the case, so a stall at its very end is counted in it.
  const probe = performance.now();
  await fetch(`${server.url}/api/health`).then((r) => r.arrayBuffer()).catch(() => healthFailures++);
  caseWorstHealthMs = Math.max(caseWorstHealthMs, performance.now() - probe);
  cases.push({ name, statuses, ms: Math.round(performance.now() - started), startRssMb, peakRssMb: Math.round(casePeakRss), worstHealthMs: Math.round(caseWorstHealthMs) });
}

const send = (name: string, path: string, body: string) =>
  run(
    name,
    Array.from({ length: parallel }, () => async () => {
      const res = await fetch(`${server.url}/api/${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body });
      await res.arrayBuffer();
      return res.status;
    }),
  );

/** Files sent to files/upload at once, each in a request of its own; then their documents' text read (or failed). */
async function sendUploads(name: string, files: { filename: string; bytes: Uint8Array }[]) {
  const ids: string[] = [];
  const uploadOne = (file: { filename: string; bytes: Uint8Array }) => async () => {
    const form = new FormData();
    form.append('file', new Blob([file.bytes]), file.filename);
    const res = await fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    const answer = (await res.json()) as { id?: string; textStatus?: string };
    if (res.status === 200 && answer.textStatus === 'pending') ids.push(answer.id!);
    return res.status;
  };
  await run(name, files.map(uploadOne), async () => {
    // A document is read after its upload answers: the case lasts until its reading ends.
    for (const fileId of ids) {
      for (let i = 0; i < 1200; i++) {
        const res = await fetch(`${server.url}/api/files/getFile`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ fileId }) });
        if (((await res.json()) as { textStatus: string }).textStatus !== 'pending') break;
        await Bun.sleep(50);
      }
    }
  });
}

// Every body is made before the clock starts: making them (a 26 MB string, 300 MB of zeros to
// compress) blocks this process, and the health probe below would count that as the server's.
const bodies: { name: string; path: string; body: string }[] = [];
// 60 KB fits the 64 KiB limit of most operations, 26 MB that of image conversion (~26.7 MiB).
for (const mb of [0.06, 1, 8, 26]) {
  for (const shape of costlyJsonShapes(Math.round(mb * 1024 * 1024))) {
    bodies.push({ name: `json ${shape.name} ${mb} MB → preferences/get`, path: 'preferences/get', body: shape.body });
    bodies.push({ name: `json ${shape.name} ${mb} MB → images/convertImage`, path: 'images/convertImage', body: shape.body });
  }
}
const image = (name: string, type: string, bytes: Uint8Array) => bodies.push({ name: `image ${name}`, path: 'images/convertImage', body: JSON.stringify({ dataUrl: dataUrl(type, bytes) }) });
image('iCCP profile inflating to 300 MB', 'image/png', iccpBomb(300 * 1024 * 1024));
image('zTXt inflating to 300 MB', 'image/png', ztxtBomb(300 * 1024 * 1024));
image('iTXt inflating to 300 MB', 'image/png', itxtBomb(300 * 1024 * 1024));
for (const [w, h] of [[4000, 3000], [8000, 6000], [16384, 16384]] as const) image(`all-zero PNG ${w}×${h}`, 'image/png', png(w, h));
for (const [w, h] of [[4000, 3000], [8000, 6000], [65535, 65535]] as const) image(`GIF canvas ${w}×${h}`, 'image/gif', gifBomb(w, h));

// Uploads decode images too (the re-encode and the thumbnail), and read documents after they
// answer: the largest images the default pixel limit allows, alone, beside a document, four at once.
const uploads: { name: string; files: { filename: string; bytes: Uint8Array }[] }[] = [];
const zeroPng = { filename: 'zeros.png', bytes: png(4096, 4096) };
const frames = { filename: 'frames.gif', bytes: animatedGifBomb(4096, 4096, 200) };
// A DOCX's text part of 95 MB (refused from the archive's directory), and one of 13 MB, just
// under the largest part read, of one-letter paragraphs: what costs the reader most a byte.
const docx95 = { filename: 'heavy.docx', bytes: heavyDocx(95 * 1024 * 1024) };
const docx13 = { filename: 'dense.docx', bytes: heavyDocx(13 * 1024 * 1024) };
uploads.push({ name: 'upload all-zero PNG 4096×4096', files: [zeroPng] });
uploads.push({ name: 'upload 200-frame GIF 4096×4096', files: [frames] });
uploads.push({ name: 'upload all-zero PNG 4096×4096 beside a DOCX of 95 MB of paragraphs', files: [zeroPng, docx95] });
uploads.push({ name: 'upload all-zero PNG 4096×4096 beside a DOCX of 13 MB of paragraphs', files: [zeroPng, docx13] });
uploads.push({ name: 'upload four all-zero PNGs 4096×4096 at once', files: [zeroPng, zeroPng, zeroPng, zeroPng] });
uploads.push({ name: 'upload four 200-frame GIFs 4096×4096 at once', files: [frames, frames, frames, frames] });

// Recordings of the largest size audio/transcribe takes, more at once than the speech server
// answers: each is held in memory while the server works on it.
const recordings = { name: `transcribe ${parallel * 2} recordings of 25 MB at once`, count: parallel * 2 };
const wav = new Uint8Array(25 * 1024 * 1024 - 1024);
wav.set(new TextEncoder().encode('RIFF\0\0\0\0WAVEfmt '));
async function sendRecordings(name: string, count: number) {
  const one = async () => {
    const form = new FormData();
    form.append('file', new Blob([wav]), 'talk.wav');
    const res = await fetch(`${server.url}/api/audio/transcribe`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    await res.arrayBuffer();
    return res.status;
  };
  await run(name, Array.from({ length: count }, () => one));
}

/** Hostile code, `parallel` turns at once: each must end with the code's clear error, the turn itself done. */
// One user a turn: a user's AI rate limit would refuse the third turn at once before any code ran.
const coders = Array.from({ length: parallel }, (_, i) => createUserWithKey(cmd, dataDir, `coder${i}@example.org`));
async function sendCode(name: string, n: number) {
  const one = (coder: string) => async () => {
    const res = await fetch(`${server.url}/api/chat/stream`, { method: 'POST', headers: { 'x-api-key': coder, 'content-type': 'application/json' }, body: JSON.stringify({ message: `Run code:${n}` }) });
    const text = await res.text();
    // A turn that did not end with done, or code that ran without an error, counts as a failure (599).
    if (text.includes('"type":"done"') && /code_interpreter\.completed[^\n]*"error"/.test(text)) return res.status;
    console.error(`${name}: ${res.status} ${text.slice(-400)}`);
    return 599;
  };
  await run(name, coders.map(one));
}

const started = await status();
sampling = true;
const sampler = sample();
const prober = probe();
for (const b of bodies) if (b.name.includes(only)) await send(b.name, b.path, b.body);
for (const u of uploads) if (u.name.includes(only)) await sendUploads(u.name, u.files);
if (recordings.name.includes(only)) await sendRecordings(recordings.name, recordings.count);
for (const [n, c] of CODE_BOMBS.entries()) if (`code: ${c.name}`.includes(only)) await sendCode(`code: ${c.name}`, n);

sampling = false;
await Promise.all([sampler, prober]);
const end = await status();
const alive = server.proc.exitCode === null;
server.proc.kill('SIGTERM');
await server.proc.exited;
stt.stop();
model.stop();

const serverErrors = cases.filter((c) => c.statuses.some((s) => s >= 500 || s === 0));
const report = {
  defaults: 'every setting at its default, but a speech-to-text server (a local fake) is set up, and the code interpreter is on with a fake model calling it',
  parallel,
  idleRssMb: Math.round(started.rss),
  peakRssMb: Math.round(Math.max(peakRss, end.hwm)),
  maxRssMb,
  worstHealthMs: Math.round(worstHealthMs),
  maxHealthMs,
  healthFailures,
  serverAlive: alive,
  cases,
};
console.log(JSON.stringify(report, null, 2));
const ok = alive && report.peakRssMb <= maxRssMb && report.worstHealthMs <= maxHealthMs && serverErrors.length === 0 && healthFailures === 0;
if (!ok) console.error(`bombs: FAILED (peak ${report.peakRssMb} MB of ${maxRssMb}; worst health ${report.worstHealthMs} ms of ${maxHealthMs}; ${serverErrors.length} cases with 5xx or no answer; ${healthFailures} health failures; alive ${alive})`);
process.exit(ok ? 0 : 1);
