/**
 * Figure 4, research relay: a fake OpenAI Responses upstream (bench/fakes/research-upstream.ts)
 * emits 20,000 `response.output_text.delta` events as fast as it is read. Through
 * `chat/streamDeepResearch` every one is persisted and relayed as a `text.delta`; we count
 * relayed upstream deltas per second (target ≥ 50,000/s) and the latency each gains, against the
 * same client reading the fake directly (the floor). Each delta's text is its send time.
 * Persistence is checked by replaying the response (`chat/resumeStream`) when that exists.
 */
import { join } from 'node:path';
import { fmtInt, fmtMs, type BenchContext, type Figure } from '../lib/context';
import { operationExists, startParley, tailLog, type Parley } from '../lib/parley';
import { freePort, spawnChild, stopChild, waitFor200 } from '../lib/proc';
import type { Row } from '../lib/report';
import { readSse } from '../lib/sse-read';
import { nowMs, percentile } from '../lib/stats';

const DELTAS = 20_000;
const TARGET_PER_S = 50_000;

interface Relay {
  deltas: number;
  perS: number;
  totalMs: number;
  p50Ms: number;
  p99Ms: number;
  types: Record<string, number>;
  responseId?: string;
  lastError?: string;
}

/** Read an event stream; count upstream deltas (timestamps) in the frames `isDelta` picks. */
async function consume(res: Response, started: number, deltaOf: (data: any) => string | undefined): Promise<Relay> {
  if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  const latencies: number[] = [];
  const types: Record<string, number> = {};
  let first = 0;
  let last = 0;
  let responseId: string | undefined;
  let lastError: string | undefined;
  for await (const f of readSse(res.body)) {
    let data: any;
    try {
      data = JSON.parse(f.data);
    } catch {
      continue;
    }
    types[data.type] = (types[data.type] ?? 0) + 1;
    if (data.type === 'response.created') responseId = data.responseId ?? data.response?.id;
    if (data.type === 'error') lastError = data.message;
    const delta = deltaOf(data);
    if (delta === undefined) continue;
    for (const stamp of delta.trim().split(/\s+/)) {
      if (!stamp) continue;
      latencies.push(f.at - Number(stamp));
      if (!first) first = f.at;
      last = f.at;
    }
  }
  const n = latencies.length;
  return {
    deltas: n,
    perS: n > 1 ? (n / (last - first)) * 1000 : 0,
    totalMs: nowMs() - started,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    types,
    responseId,
    lastError,
  };
}

async function direct(upstream: string): Promise<Relay> {
  const started = nowMs();
  const res = await fetch(`${upstream}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body: JSON.stringify({ model: 'fake-research', input: 'bench', stream: true, background: true }),
  });
  return consume(res, started, (d) => (d.type === 'response.output_text.delta' ? d.delta : undefined));
}

async function throughParley(p: Parley): Promise<Relay> {
  const started = nowMs();
  const res = await fetch(`${p.url}/api/chat/streamDeepResearch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': p.key },
    body: JSON.stringify({ message: 'Benchmark the relay.' }),
  });
  return consume(res, started, (d) => (d.type === 'text.delta' ? d.delta : undefined));
}

/** Replay the whole response from storage and count the deltas it holds. */
async function replayCount(p: Parley, responseId: string): Promise<number | undefined> {
  if (!(await operationExists(p, 'chat/resumeStream'))) return undefined;
  const res = await fetch(`${p.url}/api/chat/resumeStream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': p.key },
    body: JSON.stringify({ responseId }),
  });
  return (await consume(res, nowMs(), (d) => (d.type === 'text.delta' ? d.delta : undefined))).deltas;
}

export const researchFigure: Figure = {
  id: 'research',
  title: '4 research',
  async run(ctx: BenchContext): Promise<Row[]> {
    const figure = '4 research';
    const port = await freePort();
    const fake = spawnChild([process.execPath, join(ctx.benchDir, 'fakes', 'research-upstream.ts'), String(port), String(DELTAS)], { stdout: 'ignore', stderr: 'inherit' });
    const upstream = `http://127.0.0.1:${port}`;
    await waitFor200(upstream, 15_000, () => fake.exitCode === null);
    const parley = await startParley(ctx.bin, {
      PARLEY_AI_PROVIDER: 'openai-responses',
      PARLEY_AI_BASE_URL: `${upstream}/v1`,
      PARLEY_AI_API_KEY: 'bench',
      PARLEY_AI_MODEL: 'fake-chat',
      PARLEY_RESEARCH_MODEL: 'fake-research',
      // Runs follow each other; a finishing task must not make the next one a 429.
      PARLEY_RESEARCH_MAX_PER_USER: '8',
    });
    try {
      ctx.log('direct: the client reads the fake upstream');
      await direct(upstream); // warm-up
      const base = await direct(upstream);
      if (!(await operationExists(parley, 'chat/streamDeepResearch'))) {
        ctx.raw.research = { direct: base };
        return [
          { figure, measure: `baseline alone: ${fmtInt(DELTAS)} deltas read directly`, baseline: `${fmtInt(base.perS)} /s`, detail: `p50 ${fmtMs(base.p50Ms)}, p99 ${fmtMs(base.p99Ms)}` },
          { figure, measure: 'streamDeepResearch relay', skipped: 'operation not available: chat/streamDeepResearch' },
        ];
      }
      ctx.log('through chat/streamDeepResearch');
      const runs: Relay[] = [];
      for (let i = 0; i < (ctx.quick ? 1 : 3); i++) runs.push(await throughParley(parley));
      const relayed = runs.reduce((a, b) => (b.perS > a.perS ? b : a));
      if (relayed.deltas < DELTAS)
        throw new Error(`only ${relayed.deltas} of ${DELTAS} deltas relayed (${JSON.stringify(relayed.types)}${relayed.lastError ? `, error: ${relayed.lastError}` : ''}); server log: ${tailLog(parley)}`);
      const replayed = relayed.responseId ? await replayCount(parley, relayed.responseId) : undefined;
      ctx.raw.research = { direct: base, runs, replayed };
      const persisted = replayed === undefined ? 'persistence not checked (no chat/resumeStream)' : `${fmtInt(replayed)}/${fmtInt(DELTAS)} replayed from storage`;
      return [
        {
          figure,
          measure: `deltas relayed and persisted per second (${fmtInt(DELTAS)})`,
          parley: `${fmtInt(relayed.perS)} /s`,
          baseline: `${fmtInt(base.perS)} /s`,
          ratio: relayed.perS / base.perS,
          target: `≥ ${fmtInt(TARGET_PER_S)} /s`,
          met: relayed.perS >= TARGET_PER_S && (replayed === undefined || replayed >= DELTAS),
          detail: `best of ${runs.length}; request to last event ${fmtMs(relayed.totalMs)} (direct ${fmtMs(base.totalMs)}); ${persisted}`,
        },
        {
          figure,
          measure: 'latency added per event (p50 / p99)',
          parley: `${fmtMs(relayed.p50Ms - base.p50Ms)} / ${fmtMs(relayed.p99Ms - base.p99Ms)}`,
          target: 'reported',
          detail: `end to end p50 ${fmtMs(relayed.p50Ms)}, p99 ${fmtMs(relayed.p99Ms)}; direct p50 ${fmtMs(base.p50Ms)}, p99 ${fmtMs(base.p99Ms)}`,
        },
      ];
    } finally {
      await Promise.all([parley.stop(), stopChild(fake)]);
    }
  },
};
