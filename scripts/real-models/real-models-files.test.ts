/**
 * A PDF through the compiled `parley` to a real llama-server: uploaded, its text extracted in the
 * binary's worker, sent with `chat/stream {files: [id]}`. The tiny model cannot call tools (the
 * model's README), so two turns:
 * 1. As sent: what is deterministic is asserted (the request names the document and offers
 *    read_file, the turn ends with `done`) and what the model did is printed, not assumed.
 * 2. The call the model would make, scripted between Parley and llama-server (as
 *    tool-call-proxy.ts does for search_history): Parley runs read_file for real, and the next
 *    round, carrying the PDF's text, goes through the real chat template to the real model.
 * The proxy also asks llama-server to stop at the first comma or full stop (see below).
 * Run by scripts/real-models/run.sh; alone:
 *   PARLEY_LLAMA_SERVER_DIR=... node_modules/.bin/bun test ./scripts/real-models/real-models-files.test.ts
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { buildBinaryOnce } from '../../test/build-binary';
import { makePdf } from '../../test/fixtures/documents';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from './llama-server';
import type { LoopbackProxy } from './loopback-proxy';
import { readEvents, startParley, type Parley } from './parley-binary';
import { READ_MARKER, scriptedRead, startScriptingProxy, wantsScriptedRead, type UpstreamCall } from './scripted-read';

setDefaultTimeout(180_000);

/** The distinctive fact, only in the PDF. */
const FACT = 'The lighthouse on Quillon Point has exactly 1,847 steps.';

let server: LlamaServer | undefined;
let proxy: LoopbackProxy | undefined;
let parley: Parley | undefined;
/** Every chat request Parley sent upstream, with what answered it. */
const upstream: UpstreamCall[] = [];

beforeAll(async () => {
  const dir = llamaServerDir();
  server = await startLlamaServer({ dir, model: testModelPath(), contextTokens: 4096, templateFile: join(dir, 'templates', 'Qwen-Qwen2.5-7B-Instruct.jinja') });
  proxy = startScriptingProxy(
    () => server!.url,
    (body) => {
      const fileId = wantsScriptedRead(body);
      return fileId ? scriptedRead(body.model, fileId) : undefined;
    },
    upstream,
  );
  parley = await startParley(await buildBinaryOnce(), { PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: proxy.apiUrl, PARLEY_AI_API_KEY: 'none', PARLEY_AI_MODEL: 'tiny' });
});
afterAll(async () => {
  await parley?.stop();
  proxy?.stop();
  await server?.stop();
});

async function uploadPdf(p: Parley): Promise<any> {
  const form = new FormData();
  form.append('file', new Blob([await makePdf([['Harbour notes, page one.', FACT], ['Page two: the keeper retired in spring.']])]), 'lighthouse.pdf');
  const res = await fetch(`${p.url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': p.keys[0]! }, body: form });
  expect(res.status).toBe(200);
  return res.json();
}

async function turn(p: Parley, body: unknown): Promise<any[]> {
  const events: any[] = [];
  for await (const e of readEvents(await p.call('chat/stream', body))) {
    events.push(e);
    if (e.type === 'done' || e.type === 'error') break;
  }
  return events;
}

const userText = (body: any): string => body.messages.filter((m: any) => m.role === 'user').at(-1).content;
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name);

describe('a PDF read through the compiled binary against a real model', () => {
  let file: any;
  beforeAll(async () => {
    file = await uploadPdf(parley!);
    // Extracted in the binary's worker (PDF.js inside the executable).
    for (let i = 0; i < 200 && file.textStatus === 'pending'; i++) {
      await Bun.sleep(100);
      file = await parley!.json('files/getFile', { fileId: file.id });
    }
  });

  test('the upload is extracted in the binary', () => {
    expect(file).toMatchObject({ mimeType: 'application/pdf', kind: 'document', textStatus: 'ready' });
  });

  test('as sent: the request names the document and offers read_file; the turn ends with done; what the model did is reported', async () => {
    const from = upstream.length;
    const events = await turn(parley!, { message: 'How many steps does the lighthouse have?', files: [file.id] });
    const sent = upstream.slice(from);
    expect(sent.length).toBeGreaterThan(0);
    expect(userText(sent[0]!.body)).toContain(`[Attached document: lighthouse.pdf (file id ${file.id}, application/pdf). Read it with read_file.]`);
    expect(toolNames(sent[0]!.body)).toEqual(expect.arrayContaining(['read_file', 'search_files']));
    expect(sent.every((s) => s.status === 200)).toBe(true);
    expect(events.at(-1), JSON.stringify(events.at(-1))).toMatchObject({ type: 'done' });
    const reads = events.filter((e) => e.type === 'read_file.completed');
    const text = events.filter((e) => e.type === 'text.delta').map((e) => e.delta).join('');
    console.log(
      `real model, unscripted: ${reads.length ? `called read_file ${reads.length} time(s) (${reads.map((r) => (r.success ? 'read' : r.error)).join(', ')})` : 'did not call read_file'}; ` +
        `${sent.length} request(s) upstream; answered ${JSON.stringify(text.slice(0, 160))}`,
    );
    // Whatever the model did, a call it made was answered from the PDF.
    for (const r of reads) expect(r.content ?? '').toContain('1,847 steps');
  });

  test('scripted read_file: Parley reads the PDF, and its text reaches the real model through the chat template', async () => {
    const from = upstream.length;
    const events = await turn(parley!, { message: `${READ_MARKER} How many steps does the lighthouse have?`, files: [file.id] });
    const types = events.map((e) => e.type);
    expect(types).toContain('read_file.in_progress');
    expect(events.find((e) => e.type === 'read_file.in_progress')).toMatchObject({ itemId: 'scriptedRead1', fileId: file.id, filename: 'lighthouse.pdf' });
    const done = events.find((e) => e.type === 'read_file.completed');
    expect(done).toMatchObject({ success: true });
    expect(done.content).toContain(FACT);
    expect(events.at(-1), JSON.stringify(events.at(-1))).toMatchObject({ type: 'done' });
    // The round after the call went to llama-server (not scripted) with the PDF's text in the
    // tool's output, and the real template and model took it.
    const [scripted, next] = upstream.slice(from);
    expect(scripted?.scripted).toBe(true);
    expect(next?.scripted).toBe(false);
    expect(next?.status).toBe(200);
    // (Parley gives calls ids of its own upstream, nine letters and digits, for strict templates.)
    const toolMessage = next!.body.messages.find((m: any) => m.role === 'tool' && m.name === 'read_file');
    expect(toolMessage?.content).toContain(FACT);
    const text = events.filter((e) => e.type === 'text.delta').map((e) => e.delta).join('');
    console.log(`real model after the scripted read: answered ${JSON.stringify(text.slice(0, 160))}${text.includes('1,847') || text.includes('1847') ? ' (names the fact)' : ' (does not name the fact: a 260K-parameter story model)'}`);
  });
});
