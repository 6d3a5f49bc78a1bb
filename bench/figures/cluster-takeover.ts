/**
 * Scale-out figure 3: how long a turn whose instance died waits for another to end it. A chat
 * turn (`openai-chat` on the fake OpenAI server, one word every 50 ms) starts on instance r and is
 * followed through instance r+1 with `chat/resumeStream`; once the follower hears it live, and
 * 0, 2 or 4 s later (so the kill falls at different points of the owner's renewals), the owner
 * is SIGKILLed. Timed: kill → the follower's final frame (the restart error: Chat
 * Completions cannot be resumed). The documented bound (src/chat/turn-leases.ts) counts from the
 * owner's last renewal of the turn's lease, read from the database just before the kill: 15 s
 * lease + 5 s between two looks for expired ones.
 */
import { SQL } from 'bun';
import { TAKEOVER_BOUND_MS, TURN_LEASE_MS } from '../../src/chat/turn-leases';
import type { FakeOpenAI } from '../../test/fakes/openai';
import type { BenchContext } from '../lib/context';
import type { InstanceSet } from '../lib/cluster';
import type { Row } from '../lib/report';
import { readSse, type SseFrame } from '../lib/sse-read';

const BOUND_MS = TAKEOVER_BOUND_MS;
/**
 * The bound is when another instance claims the turn; ending it (its final event stored and
 * published, then carried to the follower's instance) comes after. Instances started together
 * look for expired turns in step with the owner's renewals, so a claim lands just under the bound
 * as often as not, and the final frame a few milliseconds past it.
 */
const END_ALLOWANCE_MS = 1000;
/** Give up on a turn this long after the kill. */
const WAIT_MS = BOUND_MS + 25_000;
const RESTART_MESSAGE = 'The server restarted before the response finished, and the AI provider cannot continue it.';
const describe = (frame: { type?: string; message?: string }) =>
  frame.type === 'error' && frame.message === RESTART_MESSAGE ? 'the restart error' : JSON.stringify(frame).slice(0, 200);
const TOOK_OVER = /"msg":"took over interrupted responses"/g;
/** After the follower is live, before the kill: one per run. */
const KILL_DELAYS_MS = [0, 2000, 4000];

/** A stream read in the background: every data frame, parsed, with its arrival time. */
class Follow {
  frames: (SseFrame & { json: any })[] = [];
  ended = false;
  private abort = new AbortController();
  private waiters = new Set<() => void>();

  constructor(url: string, path: string, body: unknown, key: string) {
    void (async () => {
      try {
        const res = await fetch(`${url}/api/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify(body),
          signal: this.abort.signal,
        });
        if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
        for await (const f of readSse(res.body!)) {
          this.frames.push({ ...f, json: JSON.parse(f.data) });
          this.wake();
        }
      } catch {
        // Cut (its instance was killed) or closed by us: `ended` says so.
      }
      this.ended = true;
      this.wake();
    })();
  }

  count(type: string): number {
    return this.frames.filter((f) => f.json?.type === type).length;
  }

  async until<T>(check: () => T | undefined | false, ms: number, what: string): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = check();
      if (v) return v;
      if (this.ended) throw new Error(`the stream ended before ${what} (${this.frames.length} frames)`);
      if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms (${this.frames.length} frames)`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(250, deadline - Date.now()));
        this.waiters.add(() => (clearTimeout(t), resolve()));
      });
    }
  }

  close() {
    this.abort.abort();
  }

  private wake() {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }
}

export async function takeoverFigure(ctx: BenchContext, set: InstanceSet, fake: FakeOpenAI, databaseUrl: string): Promise<Row[]> {
  const figure = '3 takeover';
  const repeats = ctx.quick ? 1 : 3;
  const words = Array.from({ length: 1200 }, (_, i) => `w${i} `);
  fake.eventDelayMs = 50;
  fake.chatScript = () => ({ deltas: words.map((content) => ({ content })) });
  const key = set.createUser('takeover@bench.example');
  const sql = new SQL({ url: databaseUrl, max: 1 });
  const rows: Row[] = [];
  const raw: unknown[] = [];
  try {
    for (let r = 1; r <= repeats; r++) {
      const ownerIndex = r;
      const followerIndex = (r % 3) + 1;
      const [owner, follower] = [set.instances[ownerIndex - 1]!, set.instances[followerIndex - 1]!];
      ctx.log(`repeat ${r}/${repeats}: a turn on instance ${ownerIndex}, followed through instance ${followerIndex}`);
      const turn = new Follow(owner.url, 'chat/stream', { message: 'Tell me a long story.' }, key);
      let resume: Follow | undefined;
      try {
        const created = await turn.until(() => turn.frames.find((f) => f.json.type === 'response.created'), 15_000, 'response.created');
        const responseId = created.json.responseId as string;
        await turn.until(() => turn.count('text.delta') >= 5, 15_000, 'five text deltas');
        resume = new Follow(follower.url, 'chat/resumeStream', { responseId, after: 0 }, key);
        // Hearing deltas the owner sends after it opened: the follower is on the live tail.
        const seen = turn.count('text.delta');
        await resume.until(() => resume!.count('text.delta') > seen + 2, 15_000, 'live text deltas on the follower');
        await Bun.sleep(KILL_DELAYS_MS[(r - 1) % KILL_DELAYS_MS.length]!);
        const tookOverBefore = set.instances.map((i) => set.log(i.index).match(TOOK_OVER)?.length ?? 0);
        const [lease] = await sql`SELECT holder, expires_at FROM leases WHERE name = ${`response:${responseId}`}`;
        if (lease?.holder !== owner.id) throw new Error(`the turn's lease is held by ${lease?.holder ?? 'nobody'}, not instance ${ownerIndex} (${owner.id})`);
        const renewedAt = Number(lease.expires_at) - TURN_LEASE_MS;
        const killedAt = await set.kill(ownerIndex);
        const end = await resume.until(() => resume!.frames.find((f) => f.json.type === 'error' || f.json.type === 'done'), WAIT_MS, 'final frame');
        // The taker logs it once the turn has ended: a moment after the frame went out.
        const takers = () => set.instances.filter((i) => (set.log(i.index).match(TOOK_OVER)?.length ?? 0) > tookOverBefore[i.index - 1]!).map((i) => i.index);
        let tookOver = takers();
        for (let waited = 0; !tookOver.length && waited < 3000; waited += 100) {
          await Bun.sleep(100);
          tookOver = takers();
        }
        const [row] = await sql`SELECT status FROM responses WHERE id = ${responseId}`;
        const afterKill = end.at - killedAt;
        const afterRenewal = end.at - renewedAt;
        raw.push({ ownerIndex, followerIndex, tookOver, killedAt, renewedAt, endAt: end.at, afterKillMs: afterKill, afterRenewalMs: afterRenewal, ending: end.json, status: row?.status, deltasBeforeKill: resume.count('text.delta') });
        rows.push({
          figure,
          measure: `kill ${r}: owner (instance ${ownerIndex}) SIGKILLed, followed on instance ${followerIndex}`,
          parley: `${(afterKill / 1000).toFixed(1)} s after the kill`,
          target: `≤ ${BOUND_MS / 1000} s after the last renewal (+${END_ALLOWANCE_MS / 1000} s to end it)`,
          met: afterRenewal <= BOUND_MS + END_ALLOWANCE_MS && describe(end.json) === 'the restart error',
          detail: `${(afterRenewal / 1000).toFixed(1)} s after the owner's last renewal (${((killedAt - renewedAt) / 1000).toFixed(1)} s before the kill); taken over by instance ${tookOver.join(', ') || '?'}; final frame ${describe(end.json)}; status ${row?.status}`,
        });
      } catch (err) {
        ctx.log(`repeat ${r} failed: ${(err as Error).message}`);
        rows.push({ figure, measure: `kill ${r}: owner (instance ${ownerIndex}) SIGKILLed, followed on instance ${followerIndex}`, skipped: `failed: ${(err as Error).message}` });
      } finally {
        turn.close();
        resume?.close();
      }
      if (owner.proc.exitCode !== null || owner.proc.signalCode !== null) await set.restart(ownerIndex);
    }
  } finally {
    ctx.raw.takeover = raw;
    await sql.close();
  }
  return rows;
}
