// The research-events write kind of the crash script: every SSE frame with an id that a
// chat/streamDeepResearch (or chat/stream) client received is an acknowledged write. After a
// restart, each response must replay from its first event with no gap, every acknowledged frame
// unchanged, and end with `done` or `error` (a turn the restart could not continue ends with an
// `error` event; one the provider can continue runs on). A Last-Event-ID reconnect must start
// exactly at the next event.
import type { WriteKind } from './write-kinds';

/** One acknowledged frame. */
export interface FrameAck {
  responseId: string;
  seq: number;
  data: string;
}

interface Frame {
  id?: string;
  data: string;
}

/** Read SSE frames (comment lines skipped) until the stream ends; `onFrame` returning false stops early. */
async function readFrames(res: Response, onFrame: (f: Frame) => boolean | void): Promise<void> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: Frame = { data: '' };
        let hasData = false;
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) frame.id = line.slice(4);
          else if (line.startsWith('data: ')) {
            frame.data += (hasData ? '\n' : '') + line.slice(6);
            hasData = true;
          }
        }
        if (hasData && onFrame(frame) === false) return;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

const splitId = (id: string) => {
  const at = id.lastIndexOf(':');
  return { responseId: id.slice(0, at), seq: Number(id.slice(at + 1)) };
};
const isEnd = (data: string) => data.startsWith('{"type":"done"') || data.startsWith('{"type":"error"');

/**
 * The answers the fake upstream streams, shortest first, each a prefix of the next: a replay's
 * text must be a prefix of the longest, and one of them whole after `done`, so an upstream
 * resume neither repeats nor skips.
 */
export const expected = { answers: [] as string[] };

/** How each response verified so far ended (by id; the last verification wins): shows the checks had something to check. */
export const researchEndings = new Map<string, { end: 'done' | 'error' | 'none'; cutByCrash: boolean }>();

/** A stream that has not finished within this long after a restart counts as broken. */
const VERIFY_TIMEOUT_MS = 30_000;

async function post(url: string, key: string, path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${url}/api/${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

/** Check one response after a restart against the frames acknowledged for it. */
async function verifyResponse(url: string, key: string, responseId: string, acked: FrameAck[]): Promise<string[]> {
  const problems: string[] = [];
  const signal = AbortSignal.timeout(VERIFY_TIMEOUT_MS);
  // 1. From the start: contiguous 1..N, ends with done/error, every acknowledged frame unchanged.
  const res = await post(url, key, 'chat/resumeStream', { responseId }, {}, signal);
  if (res.status !== 200) return [`resumeStream ${responseId} answered ${res.status}`];
  const replay = new Map<number, string>();
  let nextSeq = 1;
  let ended = false;
  try {
    await readFrames(res, (f) => {
      if (!f.id) return; // keepalive
      const at = splitId(f.id);
      if (at.responseId !== responseId) problems.push(`${responseId}: frame of another response ${f.id}`);
      if (at.seq !== nextSeq) problems.push(`${responseId}: expected seq ${nextSeq}, got ${at.seq} (gap or duplicate)`);
      nextSeq = at.seq + 1;
      replay.set(at.seq, f.data);
      if (isEnd(f.data)) return !(ended = true);
    });
  } catch (err) {
    problems.push(`${responseId}: replay broke off after seq ${nextSeq - 1} (${err instanceof Error ? err.name : err})`);
  }
  if (!ended) problems.push(`${responseId}: replay did not end with done/error (last seq ${nextSeq - 1})`);
  if (expected.answers.length) {
    const text = [...replay.values()]
      .filter((d) => d.startsWith('{"type":"text.delta"'))
      .map((d) => (JSON.parse(d) as { delta: string }).delta)
      .join('');
    const whole = replay.get(nextSeq - 1)?.startsWith('{"type":"done"');
    if (whole ? !expected.answers.includes(text) : !expected.answers.at(-1)!.startsWith(text))
      problems.push(`${responseId}: the streamed text is not ${whole ? 'the' : 'a prefix of the'} upstream answer (events repeated or skipped): …${text.slice(-60)}`);
  }
  const end = !ended ? 'none' : replay.get(nextSeq - 1)!.startsWith('{"type":"done"') ? 'done' : 'error';
  researchEndings.set(responseId, { end, cutByCrash: !acked.some((a) => isEnd(a.data)) });
  for (const a of acked) {
    const got = replay.get(a.seq);
    if (got === undefined) problems.push(`acknowledged event ${responseId}:${a.seq} is missing`);
    else if (got !== a.data) problems.push(`acknowledged event ${responseId}:${a.seq} changed: ${got.slice(0, 80)} ≠ ${a.data.slice(0, 80)}`);
  }
  // 2. Reconnect as a client library would, after the last acknowledged frame: the next one, or nothing after the end.
  const last = acked.reduce((m, a) => (a.seq > m.seq ? a : m));
  const again = await post(url, key, 'chat/streamDeepResearch', { message: 'reconnect' }, { 'last-event-id': `${responseId}:${last.seq}` }, signal);
  if (again.status !== 200) return [...problems, `Last-Event-ID reconnect to ${responseId} answered ${again.status}`];
  let first: Frame | undefined;
  await readFrames(again, (f) => {
    if (!f.id) return;
    first = f;
    return false;
  }).catch((err) => problems.push(`${responseId}: Last-Event-ID reconnect broke (${err instanceof Error ? err.name : err})`));
  if (isEnd(last.data)) {
    if (first) problems.push(`${responseId}: Last-Event-ID after the final event sent ${first.id}`);
  } else if (!first) problems.push(`${responseId}: Last-Event-ID ${last.seq} got no frame`);
  else if (first.id !== `${responseId}:${last.seq + 1}`) problems.push(`${responseId}: Last-Event-ID ${last.seq} resumed at ${first.id}, expected seq ${last.seq + 1}`);
  else if (replay.has(last.seq + 1) && replay.get(last.seq + 1) !== first.data) problems.push(`${responseId}: seq ${last.seq + 1} differs between replays`);
  return problems;
}

/**
 * Deep-research (and chat) events. The server must be started with an AI provider (the crash
 * script runs a fake upstream); each send opens one stream and reads it until it ends or the
 * server dies, acknowledging frame by frame.
 */
export const researchEvents: WriteKind<FrameAck> = {
  name: 'chat/streamDeepResearch',
  needs: ['chat/streamDeepResearch', 'chat/resumeStream'],
  ownLane: true,
  async send(actor, seq, attempt, acknowledge) {
    const path = seq % 3 === 2 ? 'chat/stream' : 'chat/streamDeepResearch';
    const message = `crash research ${actor.worker}-${seq}`;
    attempt(message);
    const res = await post(actor.url, actor.key, path, { message, ...(seq % 4 === 0 ? { model: 'fake-short' } : {}) });
    if (res.status !== 200) {
      await res.body?.cancel();
      return undefined;
    }
    let lastAck: FrameAck | undefined;
    await readFrames(res, (f) => {
      if (!f.id) return;
      lastAck = { ...splitId(f.id), data: f.data };
      acknowledge(lastAck);
    });
    return undefined; // every frame was acknowledged as it came
  },
  async verify(actor, acks) {
    const byResponse = new Map<string, FrameAck[]>();
    for (const a of acks) {
      if (!byResponse.has(a.responseId)) byResponse.set(a.responseId, []);
      byResponse.get(a.responseId)!.push(a);
    }
    const all = await Promise.all([...byResponse].map(([id, acked]) => verifyResponse(actor.url, actor.key, id, acked).catch((err) => [`${id}: verify failed: ${err}`])));
    return all.flat();
  },
};
