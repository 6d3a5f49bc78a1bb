/**
 * Turns whose model runs code (the code interpreter, docs/code-interpreter.md): the fake OpenAI
 * chat server scripts the model's `run_python` / `run_javascript` calls, a real sandbox child
 * runs them. Shared by the Python and the JavaScript tests.
 */
import { afterAll, beforeEach, expect } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, type TestContext, type TestUser } from '../helpers';
import { readFrames, type Frame } from '../sse';
import { startFakeOpenAI, toolCallsThenAnswer } from '../fakes/openai';
import type { Config } from '../../src/config';

/** A fake model server for the file's tests, and the temp directories to remove after them. */
export function codeTurns() {
  const openai = startFakeOpenAI();
  const dirs: string[] = [];
  afterAll(() => {
    openai.stop();
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  });
  beforeEach(() => {
    openai.requests.length = 0;
  });

  async function setup(extra: Partial<Config> = {}) {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-code-'));
    dirs.push(dataDir);
    const config = { dataDir, aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: { capacity: 1000, perMs: 1000 }, codeInterpreter: true, ...extra } as Partial<Config>;
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    return { ctx, ann, bob };
  }

  const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body as any);
  const toolOutputs = () => chatRequests().at(-1)!.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content as string);

  /** One turn whose model runs `code` once with `tool`, then answers. */
  async function runOnce(ctx: TestContext, as: TestUser, code: string, files: string[] = [], tool = 'run_python') {
    openai.chatScript = toolCallsThenAnswer([{ id: 'call_1', name: tool, args: { code } }], 'Done.');
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Run it.', ...(files.length ? { files } : {}) }, as));
    expect(frames.at(-1)!.data.type).toBe('done');
    const [started, completed] = codeFrames(frames);
    return { frames, started, completed, told: toolOutputs()[0]! };
  }

  return { openai, dirs, setup, chatRequests, toolOutputs, runOnce };
}

export async function upload(ctx: TestContext, as: TestUser, text: string, filename: string): Promise<{ id: string }> {
  const form = new FormData();
  form.append('file', new Blob([text]), filename);
  const res = await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': as.key }, body: form }));
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string };
}

export const codeFrames = (frames: Frame[]) => frames.filter((f) => f.data.type.startsWith('code_interpreter.')).map((f) => f.data);
