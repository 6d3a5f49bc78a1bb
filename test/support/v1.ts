import type { TestContext, TestUser } from '../helpers';

/**
 * Calling the `/v1` door in tests: a request with an API key as OpenAI's clients send it
 * (`Authorization: Bearer`), and its event stream read as OpenAI's frames (`data: [DONE]` too).
 */
export function v1(ctx: TestContext, method: 'GET' | 'POST', path: string, body?: unknown, as?: TestUser | Record<string, string>, signal?: AbortSignal): Promise<Response> {
  const auth = !as ? {} : 'key' in as && 'user' in as ? { authorization: `Bearer ${(as as TestUser).key}` } : (as as Record<string, string>);
  return ctx.app.handle(
    new Request(`http://localhost${path}`, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...auth },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    }),
  );
}

export async function v1Json<T = any>(ctx: TestContext, method: 'GET' | 'POST', path: string, body?: unknown, as?: TestUser | Record<string, string>) {
  const res = await v1(ctx, method, path, body, as);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, res };
}

export interface V1Frame {
  event?: string;
  /** The data: parsed JSON, or the raw text (`[DONE]`). */
  data: any;
}

/** The frames of an event stream, one by one, and the whole text; comments left out. */
export class V1Stream {
  private reader: ReadableStreamDefaultReader<Uint8Array | string>;
  private buf = '';
  private readonly decoder = new TextDecoder();
  text = '';

  constructor(res: Response) {
    this.reader = res.body!.getReader() as ReadableStreamDefaultReader<Uint8Array | string>;
  }

  async next(): Promise<V1Frame | undefined> {
    while (true) {
      const at = this.buf.indexOf('\n\n');
      if (at >= 0) {
        const block = this.buf.slice(0, at);
        this.buf = this.buf.slice(at + 2);
        let event: string | undefined;
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        if (!data.length) continue;
        const raw = data.join('\n');
        return { event, data: raw === '[DONE]' ? raw : JSON.parse(raw) };
      }
      const { done, value } = await this.reader.read();
      if (done) return undefined;
      const piece = typeof value === "string" ? value : this.decoder.decode(value, { stream: true });
      this.text += piece;
      this.buf += piece;
    }
  }

  async all(): Promise<V1Frame[]> {
    const out: V1Frame[] = [];
    for (let f = await this.next(); f; f = await this.next()) out.push(f);
    return out;
  }

  cancel(): Promise<void> {
    return this.reader.cancel();
  }
}
