/**
 * One streamed answer timed from the client's side: when the request went, when its first and
 * last pieces of text arrived, and the text. The same clock and the same reader for the model
 * server called directly and for Parley, so the difference between them is Parley's.
 */
import { readSse } from './sse-read';
import { nowMs } from './stats';

export interface TimedAnswer {
  /** Request sent → first non-empty piece of text, in ms. */
  firstMs: number;
  /** First → last piece of text, in ms. */
  spanMs: number;
  /** Pieces of text: content chunks (one token each on llama-server) or `text.delta` events. */
  pieces: number;
  text: string;
}

/** Reads `res`, taking from each frame's JSON the text `textOf` finds (undefined or '' for none). */
async function timeStream(sent: number, res: Response, textOf: (data: any) => string | undefined): Promise<TimedAnswer> {
  if (!res.ok || !res.body) throw new Error(`the stream answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  let first = 0;
  let last = 0;
  let pieces = 0;
  let text = '';
  for await (const f of readSse(res.body)) {
    if (f.data === '[DONE]') continue;
    const piece = textOf(JSON.parse(f.data));
    if (!piece) continue;
    if (!first) first = f.at;
    last = f.at;
    pieces++;
    text += piece;
  }
  if (!pieces) throw new Error('the stream carried no text');
  return { firstMs: first - sent, spanMs: last - first, pieces, text };
}

/**
 * A streamed Chat Completions request, `body` as it is, straight to the model server. llama-server
 * sometimes closes a pooled keep-alive connection just as this client reuses it (ECONNRESET before
 * any answer; seen on a busy machine, never on Parley's side): that request is sent again once,
 * timed from the new send, and `onResend` counts it.
 */
export async function timeDirect(completionsUrl: string, body: string, onResend: () => void = () => {}): Promise<TimedAnswer> {
  for (let attempt = 0; ; attempt++) {
    const sent = nowMs();
    let res: Response;
    try {
      res = await fetch(completionsUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    } catch (err) {
      if (attempt > 0 || (err as { code?: string }).code !== 'ECONNRESET') throw err;
      onResend();
      continue;
    }
    return timeStream(sent, res, chunkText);
  }
}

/** The text of a Chat Completions chunk (none in the usage chunk). */
const chunkText = (d: any): string | undefined => d.choices?.[0]?.delta?.content;

/** A streamed `POST /v1/chat/completions` through Parley, with its API key as OpenAI's clients send it. */
export async function timeV1(url: string, key: string, body: string): Promise<TimedAnswer> {
  const sent = nowMs();
  const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body });
  return timeStream(sent, res, chunkText);
}

/** A `chat/stream` turn through Parley (a new conversation each time). */
export async function timeParley(url: string, key: string, message: string): Promise<TimedAnswer> {
  const sent = nowMs();
  const res = await fetch(`${url}/api/chat/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ message }),
  });
  return timeStream(sent, res, (d) => (d.type === 'text.delta' ? d.delta : undefined));
}
