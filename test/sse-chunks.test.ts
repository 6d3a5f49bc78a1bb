import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import OpenAI from 'openai';
import { eventChunkedFetch, splitEventChunks } from '../src/ai/sse-chunks';

const enc = new TextEncoder();
const dec = new TextDecoder();

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (const s of chunks) c.enqueue(enc.encode(s));
      c.close();
    },
  });
}

async function chunksOf(body: ReadableStream<Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of body) out.push(dec.decode(chunk));
  return out;
}

describe('splitEventChunks', () => {
  test('one event per chunk, whatever the network chunks were', async () => {
    const out = await chunksOf(splitEventChunks(streamOf(['data: a\n\ndata: b\n\nda', 'ta: c\n', '\n: beat\n\ndata: tail'])));
    expect(out).toEqual(['data: a\n\n', 'data: b\n\n', 'data: c\n\n', ': beat\n\n', 'data: tail']);
  });

  test('never changes the bytes, for any split of any stream', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: fc.constantFrom('a', 'é', '\n', '\r', ':', ' ') }), { maxLength: 12 }), async (parts) => {
        const out = await chunksOf(splitEventChunks(streamOf(parts)));
        expect(out.join('')).toBe(parts.join(''));
      }),
      { numRuns: 200 },
    );
  });
});

describe('eventChunkedFetch', () => {
  test('the openai SDK reads every event of a stream sent as one large chunk', async () => {
    const n = 3000;
    const body = Array.from({ length: n }, (_, i) => `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', sequence_number: i, delta: `d${i} ` })}\n\n`).join('');
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (req) =>
        new URL(req.url).pathname.endsWith('/responses')
          ? new Response(body, { headers: { 'content-type': 'text/event-stream' } })
          : Response.json({ ok: true }),
    });
    try {
      const client = new OpenAI({ apiKey: 'x', baseURL: `http://127.0.0.1:${server.port}/v1`, fetch: eventChunkedFetch, maxRetries: 0 });
      const stream = await client.responses.create({ model: 'm', input: 'hi', stream: true });
      let text = '';
      for await (const ev of stream) if (ev.type === 'response.output_text.delta') text += ev.delta;
      expect(text).toBe(Array.from({ length: n }, (_, i) => `d${i} `).join(''));
      // Anything that is not an event stream passes through untouched.
      const plain = await eventChunkedFetch(`http://127.0.0.1:${server.port}/v1/other`);
      expect(await plain.json()).toEqual({ ok: true });
    } finally {
      server.stop(true);
    }
  });
});
