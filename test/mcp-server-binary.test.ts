/**
 * Parley's MCP server through the compiled binary and a real socket, with the official SDK's
 * client over its streamable HTTP transport, as an editor would connect: the tools listed with an
 * API key, a file search, and a research run against a fake upstream followed to its report after
 * the client disconnected and a new one connected (docs/mcp-server.md). On PostgreSQL too
 * (PARLEY_TEST_STORE=pg).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startBinaryServer, type BinaryServer } from './support/binary-server';
import { startFakeOpenAI, textEvents, webSearchEvents } from './fakes/openai';

setDefaultTimeout(120_000);

const openai = startFakeOpenAI();
let server: BinaryServer;

beforeAll(async () => {
  server = await startBinaryServer({ PARLEY_AI_PROVIDER: 'openai-responses', PARLEY_AI_BASE_URL: openai.url, PARLEY_AI_API_KEY: 'sk-test' });
});
afterAll(async () => {
  await server?.stop();
  openai.stop();
});

async function connect(era: '2025-11-25' | '2026-07-28' = '2025-11-25'): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${server.key}` } } });
  const client = new Client({ name: 'binary-test', version: '1.0.0' }, era === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  await client.connect(transport);
  return client;
}

describe('the SDK client against the binary', () => {
  test('tools listed with a key; a document found by search_files', async () => {
    const client = await connect();
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('start_research');
    const form = new FormData();
    form.append('file', new Blob(['Lichens are a partnership of a fungus and an alga.'], { type: 'text/plain' }), 'lichens.txt');
    const uploaded = (await (await fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': server.key }, body: form })).json()) as { id: string };
    // The document's text is read in the background: search until it is there.
    let hits: { fileId: string }[] = [];
    for (let i = 0; i < 100 && !hits.length; i++) {
      hits = ((await client.callTool({ name: 'search_files', arguments: { query: 'lichens fungus' } })).structuredContent as { hits: { fileId: string }[] }).hits;
      if (!hits.length) await Bun.sleep(100);
    }
    expect(hits.map((h) => h.fileId)).toEqual([uploaded.id]);
    await client.close();
  });

  test('a research run followed to its report after the client disconnects and another connects', async () => {
    openai.eventDelayMs = 200;
    openai.responsesScript = () => [...webSearchEvents('ws_1', 'lichens', ['https://lichens.example.org/']), ...textEvents('Lichens are slow and old.', 6)];
    const first = await connect();
    const started = await first.callTool({ name: 'start_research', arguments: { question: 'How old do lichens get?' } });
    const { researchId } = started.structuredContent as { researchId: string };
    const seen: number[] = [];
    const cut = await first.callTool({ name: 'follow_research', arguments: { researchId, waitSeconds: 1 } }, { onprogress: (p) => seen.push(p.progress) });
    const { done, lastSeq } = cut.structuredContent as { done: boolean; lastSeq: number };
    expect(done).toBe(false);
    expect(seen.length).toBeGreaterThan(0);
    await first.close();

    // The run went on without a client; a new one, on the newer protocol, picks it up by id.
    const second = await connect('2026-07-28');
    const rest: number[] = [];
    const followed = await second.callTool({ name: 'follow_research', arguments: { researchId, after: lastSeq } }, { onprogress: (p) => rest.push(p.progress) });
    expect(followed.structuredContent).toMatchObject({ done: true, status: 'completed', report: 'Lichens are slow and old.', sources: [{ url: 'https://lichens.example.org/' }] });
    expect(rest.length).toBeGreaterThan(0);
    expect(Math.min(...rest)).toBeGreaterThan(lastSeq);
    const report = await second.readResource({ uri: `parley://research/${researchId}` });
    expect((report.contents[0] as { text: string }).text).toContain('https://lichens.example.org/');
    await second.close();
  });
});
