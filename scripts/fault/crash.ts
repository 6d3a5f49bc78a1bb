// Crash safety: run Parley under concurrent writes, SIGKILL it at random moments, restart it,
// and check that the database is intact and that every acknowledged write survived.
//
//   bun run scripts/fault/crash.ts [--rounds 5] [--workers 6] [--binary PATH | --from-source]
//                                  [--ai-provider openai-responses|openai-chat]
//
// AI turns (research events) go to a fake OpenAI-compatible upstream running in this process on
// 127.0.0.1, which streams a long answer slowly so kills land mid-stream. It outlives each kill,
// as a real provider would. Unless --ai-provider pins one, every third round runs
// `openai-chat` and the others `openai-responses`, so restarts cover both outcomes for a turn
// cut off by the crash: resumed from the upstream background response, and ended with `error`.
//
// Without --binary it builds the single executable first (that is what self-hosters run).
// Writes come from scripts/fault/write-kinds.ts; kinds whose operations this build does not
// serve are skipped. Exit code 0 only when every round was clean. Listens on 127.0.0.1 only.
import { Database } from 'bun:sqlite';
import { useRunTempDir } from '../lib/run-temp-dir';
import { join } from 'node:path';
import { admin, apiFor, buildBinary, createUserWithKey, flag, newDataDir, servedOperations, sourceCmd, startServer } from './harness';
import { writeKinds, type Actor, type WriteKind } from './write-kinds';
import { expected, researchEndings } from './research-kind';
import { startFakeOpenAI, textEvents } from '../../test/fakes/openai';

useRunTempDir('parley-crash-run', { keepOnFailure: true });
const rounds = Number(flag('rounds', '5'));
const workers = Number(flag('workers', '6'));
const cmd = Bun.argv.includes('--from-source') ? sourceCmd() : flag('binary', '') ? [flag('binary', '')] : buildBinary();
const dataDir = newDataDir('parley-crash');
const dbFile = join(dataDir, 'parley.db');

// A long answer (300 text deltas, 4 ms apart: over a second per turn), so kills land mid-stream;
// the research kind asks for a short one (model `fake-short`, 20 deltas) now and then, so some
// turns also finish before the kill. The short answer is a prefix of the long one.
const fake = startFakeOpenAI();
fake.eventDelayMs = 4;
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i} `);
const lengthFor = (body: { model?: string }) => (body.model === 'fake-short' ? 20 : 300);
fake.responsesScript = (body) => textEvents(words(lengthFor(body)).join(''), lengthFor(body));
fake.chatScript = (body) => ({ deltas: words(lengthFor(body)).map((content) => ({ content })) });
expected.answers = [words(20).join(''), words(300).join('')];
fake.requests.push = () => 0; // nobody reads them here; keep memory flat
const pinned = flag('ai-provider', '');
const serverEnv = (round: number): Record<string, string> => ({
  PARLEY_AI_PROVIDER: pinned || (round % 3 === 0 ? 'openai-chat' : 'openai-responses'),
  PARLEY_AI_BASE_URL: fake.url,
  PARLEY_AI_API_KEY: 'x',
  PARLEY_AI_MODEL: 'fake-model',
  PARLEY_RESEARCH_MODEL: 'fake-research-model',
  // The script measures durability, not limits: lift the caps its writers would hit.
  PARLEY_RATE_LIMIT_AI: 'off',
  PARLEY_RATE_LIMIT_WRITE: 'off',
  PARLEY_MAX_STREAMS_PER_USER: '0',
  PARLEY_RESEARCH_MAX_PER_USER: '100',
  PARLEY_RESEARCH_MAX_TOTAL: '1000',
  // Its writers make an API key per write: past PARLEY_API_KEYS_MAX_PER_USER they would get 409s.
  PARLEY_API_KEYS_MAX_PER_USER: '1000000',
  PARLEY_GROUPS_MAX_PER_USER: '1000000',
});

admin(cmd, dataDir, ['migrate']);
const keys = Array.from({ length: workers }, (_, i) => createUserWithKey(cmd, dataDir, `crash${i}@example.org`));

interface Ledger {
  acks: unknown[];
  /** Writes sent after the last acknowledgement whose outcome is unknown (the kill came first). */
  inFlight: unknown[];
}
const actors: (Actor & { ledgers: Map<string, Ledger> })[] = keys.map((key, worker) => ({
  worker,
  url: '',
  api: apiFor('', key),
  key,
  state: {},
  ledgers: new Map(),
}));
const ledger = (a: (typeof actors)[number], kind: WriteKind) => {
  if (!a.ledgers.has(kind.name)) a.ledgers.set(kind.name, { acks: [], inFlight: [] });
  return a.ledgers.get(kind.name)!;
};

let failed = false;
let seq = 0;
const report: unknown[] = [];

for (let round = 1; round <= rounds; round++) {
  const server = await startServer(cmd, dataDir, serverEnv(round));
  const served = await servedOperations(server.url);
  const kinds = writeKinds.filter((k) => k.needs.every((n) => served.has(n)));
  for (const a of actors) {
    a.url = server.url;
    a.api = apiFor(server.url, keys[a.worker]!);
  }

  // 1. Every acknowledged write so far must be there after the previous kill.
  if (round > 1) {
    const db = new Database(dbFile, { readonly: true });
    const problems: string[] = [];
    for (const a of actors)
      for (const kind of kinds) {
        const l = ledger(a, kind);
        problems.push(...(await kind.verify(a, l.acks, l.inFlight, db)));
      }
    db.close();
    if (problems.length) {
      failed = true;
      console.error(`round ${round}: ${problems.length} acknowledged writes missing`, problems.slice(0, 20));
    }
  }

  // 2. Concurrent writes, then SIGKILL at a random moment.
  let stop = false;
  let acked = 0;
  // A kind whose writes last long (a stream) gets its own lane per worker so it does not starve the quick ones.
  const lanes = [kinds.filter((k) => !k.ownLane), ...kinds.filter((k) => k.ownLane).map((k) => [k])].filter((l) => l.length);
  const loops = actors.flatMap((a) =>
    lanes.map(async (lane) => {
      for (const kind of lane) if (kind.setup && !a.state[`setup:${kind.name}`]) await kind.setup(a).then(() => (a.state[`setup:${kind.name}`] = true));
      while (!stop) {
        const kind = lane[Math.floor(Math.random() * lane.length)]!;
        const l = ledger(a, kind);
        let sent: unknown;
        try {
          const ack = await kind.send(
            a,
            seq++,
            (s) => (sent = s),
            (piece) => {
              l.acks.push(piece);
              l.inFlight = [];
              sent = undefined;
              acked++;
            },
          );
          if (ack !== undefined) {
            l.acks.push(ack);
            l.inFlight = [];
            acked++;
          } else if (sent !== undefined) l.inFlight.push(sent);
        } catch {
          if (sent !== undefined) l.inFlight.push(sent);
          return; // the server is gone
        }
      }
    }),
  );
  const killAfter = 300 + Math.floor(Math.random() * 1200);
  await Bun.sleep(killAfter);
  server.proc.kill('SIGKILL');
  stop = true;
  await server.proc.exited;
  await Promise.allSettled(loops);

  // 3. The file must be a sound database after the crash (opening it replays the WAL).
  const db = new Database(dbFile);
  const integrity = (db.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check;
  const fk = db.query('PRAGMA foreign_key_check').all();
  db.close();
  const ok = integrity === 'ok' && fk.length === 0 && acked > 0;
  if (!ok) failed = true;
  report.push({ round, killAfterMs: killAfter, acknowledged: acked, kinds: kinds.map((k) => k.name), integrity, foreignKeyViolations: fk.length });
  console.log(`round ${round}: killed after ${killAfter} ms, ${acked} writes acknowledged, integrity ${integrity}${acked === 0 ? ' (NO WRITES: round proves nothing)' : ''}`);
}

// Final restart: verify everything once more, then a clean SIGTERM must exit 0.
const server = await startServer(cmd, dataDir, serverEnv(rounds + 1));
const served = await servedOperations(server.url);
const db = new Database(dbFile, { readonly: true });
const problems: string[] = [];
let total = 0;
for (const a of actors) {
  a.url = server.url;
  a.api = apiFor(server.url, keys[a.worker]!);
  for (const kind of writeKinds.filter((k) => k.needs.every((n) => served.has(n)))) {
    const l = ledger(a, kind);
    total += l.acks.length;
    problems.push(...(await kind.verify(a, l.acks, l.inFlight, db)));
  }
}
db.close();
server.proc.kill('SIGTERM');
const exitCode = await server.proc.exited;
fake.stop();
if (problems.length || exitCode !== 0) failed = true;
const perKind = Object.fromEntries(writeKinds.map((k) => [k.name, actors.reduce((n, a) => n + (a.ledgers.get(k.name)?.acks.length ?? 0), 0)]));
const endings = [...researchEndings.values()];
const cut = endings.filter((e) => e.cutByCrash);
const research = {
  responses: endings.length,
  cutByCrash: cut.length,
  cutThenResumedToDone: cut.filter((e) => e.end === 'done').length,
  cutThenEndedWithError: cut.filter((e) => e.end === 'error').length,
};
console.log(JSON.stringify({ rounds: report, acknowledgedTotal: total, acknowledgedPerKind: perKind, research, missing: problems, finalExitCode: exitCode, ok: !failed }, null, 2));
process.exit(failed ? 1 : 0);
