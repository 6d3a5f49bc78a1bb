// Smoke-test a built executable, natively or under an emulator:
//   bun run scripts/smoke.ts dist/parley-linux-x64
//   bun run scripts/smoke.ts --emulator "qemu-aarch64-static -L /usr/aarch64-linux-gnu" dist/parley-linux-arm64
// Boots it on an empty data dir (which migrates), asks /api/health, converts one image, runs
// `doctor` (which loads the embedded image binding in-process, and with the code interpreter on
// finds Pyodide in the `pyodide` directory beside the executable, at the version it needs) and
// stops it with SIGTERM.
// Natively it then boots it once more with a temporary directory it cannot use: conversions must
// fail as a server error naming that cause, and doctor must say so (under an emulator a second
// boot costs too much for what it adds).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { waitForListening } from './lib/wait-for-listening';

const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), options: { emulator: { type: 'string' } }, allowPositionals: true });
if (positionals.length !== 1) throw new Error('usage: smoke.ts [--emulator CMD] BINARY');
const binary = resolve(positionals[0]!);
const prefix = values.emulator ? values.emulator.split(/\s+/).filter(Boolean) : [];
const work = mkdtempSync(join(tmpdir(), 'parley-smoke-'));
const dataDir = join(work, 'data');
const env = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: 'info', PARLEY_CODE_INTERPRETER: 'true' };
const started = performance.now();
const step = (msg: string) => console.log(`  ${((performance.now() - started) / 1000).toFixed(1).padStart(5)}s  ${msg}`);

function fail(msg: string): never {
  console.error(`smoke: FAILED: ${msg}`);
  process.exit(1);
}

function run(args: string[]) {
  const p = Bun.spawnSync([...prefix, binary, ...args], { env, stdout: 'pipe', stderr: 'pipe' });
  if (p.exitCode !== 0) fail(`parley ${args.join(' ')} exited ${p.exitCode}: ${p.stderr.toString().trim()}`);
  return p.stdout.toString();
}

// A 1x1 PNG.
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const convertPng = (url: string, key: string) =>
  fetch(`${url}/api/images/convertImage`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ dataUrl: PNG }) });
let key = '';

console.log(`smoke-testing ${binary}${prefix.length ? ` under ${prefix[0]}` : ''}`);
step(run(['--version']).trim());

const server = Bun.spawn([...prefix, binary, 'serve', '--port', '0'], { env, stdout: 'pipe', stderr: 'pipe' });
const stderr = new Response(server.stderr).text();
let url = '';
try {
  // JIT-less start-up under emulation is slow.
  url = await waitForListening(server, 120_000).catch((err: Error) => fail(err.message));
  step(`serving at ${url} on an empty data dir`);

  const health = await fetch(`${url}/api/health`);
  if (health.status !== 200 || ((await health.json()) as { status?: string }).status !== 'ok') fail(`/api/health answered ${health.status}`);
  step('/api/health ok');

  // Probe without a credential first: 401 means the operation exists, 404 that this build lacks it
  // (a CLI start costs seconds under emulation, so the user and key are made only when needed).
  const convert = `${url}/api/images/convertImage`;
  const probe = await fetch(convert, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  if (probe.status === 404) step('images/convertImage is not in this build yet: the image binding is checked by doctor below');
  else {
    run(['user', 'create', '--email', 'smoke@example.org']);
    key = JSON.parse(run(['apikey', 'create', '--email', 'smoke@example.org', '--json'])).key;
    const conv = await convertPng(url, key);
    const body = (await conv.json()) as { success?: boolean; dataUrl?: string; originalFormat?: string };
    if (conv.status !== 200 || body.success !== true || !body.dataUrl?.startsWith('data:image/jpeg;base64,')) fail(`images/convertImage answered ${conv.status} ${JSON.stringify(body).slice(0, 300)}`);
    const jpeg = Buffer.from(body.dataUrl.split(',')[1]!, 'base64');
    if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) fail('images/convertImage returned something that is not a JPEG');
    step(`images/convertImage ${body.originalFormat} → JPEG (${jpeg.length} bytes)`);
  }

  const doctor = JSON.parse(run(['doctor', '--json'])) as { checks: { name: string; status: string; detail: string }[] };
  for (const name of ['data directory', 'database', 'migrations', 'image codec']) {
    const c = doctor.checks.find((x) => x.name === name);
    if (c?.status !== 'ok') fail(`doctor: ${name}: ${c ? `${c.status} ${c.detail}` : 'missing'}`);
  }
  step(`doctor ok (${doctor.checks.find((c) => c.name === 'image codec')!.detail})`);
  // ok, or warn where this machine gives sandboxes no network namespace: Pyodide is there either way.
  const python = doctor.checks.find((c) => c.name === 'code interpreter');
  if (python?.status !== 'ok' && python?.status !== 'warn') fail(`doctor: code interpreter: ${python ? `${python.status} ${python.detail}` : 'missing'}`);
  step(`doctor: ${python.detail}`);
} finally {
  server.kill('SIGTERM');
}
const stopAt = performance.now();
const code = await Promise.race([server.exited, Bun.sleep(30_000).then(() => 'timeout' as const)]);
if (code !== 0) fail(`SIGTERM: expected exit 0, got ${code}\n${await stderr}`);
const log = await stderr;
if (!log.includes('"migrations applied"')) fail('the server did not migrate the empty data dir');
if (!log.includes('"stopped"')) fail('the server did not log a clean stop');
step(`stopped cleanly on SIGTERM in ${((performance.now() - stopAt) / 1000).toFixed(1)}s`);

if (!prefix.length && key) {
  const badTmp = { ...env, TMPDIR: join(work, 'no-such-dir') };
  const second = Bun.spawn([binary, 'serve', '--port', '0'], { env: badTmp, stdout: 'pipe', stderr: 'pipe' });
  const secondLog = new Response(second.stderr).text();
  try {
    const url2 = await waitForListening(second, 30_000).catch((err: Error) => fail(err.message));
    for (const attempt of ['first', 'second']) {
      const res = await convertPng(url2, key);
      if (res.status !== 500) fail(`with an unusable TMPDIR the ${attempt} conversion answered ${res.status} ${(await res.text()).slice(0, 200)}, not 500`);
    }
  } finally {
    second.kill('SIGTERM');
  }
  await second.exited;
  if (!(await secondLog).includes('could not unpack the image codec into')) fail('the log does not name why the codec did not load');
  const p = Bun.spawnSync([binary, 'doctor', '--json'], { env: badTmp, stdout: 'pipe', stderr: 'pipe' });
  const codecCheck = (JSON.parse(p.stdout.toString()) as { checks: { name: string; status: string; fix?: string }[] }).checks.find((c) => c.name === 'image codec');
  if (codecCheck?.status !== 'fail' || !codecCheck.fix?.includes('TMPDIR')) fail(`doctor with an unusable TMPDIR: ${JSON.stringify(codecCheck)}`);
  step('an unusable TMPDIR: conversions answer 500 naming the cause, doctor says what to fix');
}
rmSync(work, { recursive: true, force: true });
console.log('smoke: ok');
