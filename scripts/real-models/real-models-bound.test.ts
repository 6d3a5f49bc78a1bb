/**
 * The context budget's bound (src/ai/bound-request.ts), which lets a request go without an exact
 * count, against the exact count (`/apply-template`, then `/tokenize`) for every chat template
 * llama.cpp bundles: for each, every request below, through Parley's own counter. The tiny model's
 * SentencePiece vocabulary has 512 pieces, so its counts are near the worst any tokenizer gives
 * (other scripts and emoji go byte by byte): a bound that holds here holds for larger vocabularies.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { llamaServerDir, startLlamaServer, testModelPath } from './llama-server';
import { createModelContextSource } from '../../src/ai/model-context';
import { shapeChatMessages, type ChatTurn } from '../../src/ai/shape-chat-messages';
import { memoryTools } from '../../src/memory/memory.tools';
import { fileTools } from '../../src/files/file.tools';
import { imageTools } from '../../src/files/image.tools';
import { canvasToolSource } from '../../src/widgets/canvas.tool';
import { historyToolSource } from '../../src/chat/history.tools';
import { webSearchTool } from '../../src/ai/web-search-tool';
import type { ToolTurn } from '../../src/tools/tool.types';
import { testConfig } from '../../src/config';
import type { AppDeps } from '../../src/deps';
import type { AiTool } from '../../src/ai/ai.types';

// Real processes on a shared 2-core machine; nothing here asserts on time.
setDefaultTimeout(600_000);

const dir = llamaServerDir();
const model = testModelPath();
const templates = readdirSync(join(dir, 'templates'))
  .filter((f) => f.endsWith('.jinja'))
  .sort();

/** Every tool Parley can offer (memories, files, images, canvas, history, web search): their schemas in wire form. */
const deps = { config: testConfig({ imagesBaseUrl: 'http://images.invalid/v1' }) } as unknown as AppDeps;
const ids = { userId: 'u', conversationId: 'c', responseId: 'r' };
const turn = { deps, kind: 'chat', user: { id: 'u', subscriptionTier: '', enableMemories: true }, conversationId: 'c', responseId: 'r', provider: 'openai-chat' } as ToolTurn;
const allTools: AiTool[] = [
  ...memoryTools(deps, ids),
  ...fileTools(deps, ids),
  ...imageTools(deps, { ...ids, images: deps.config }),
  ...(await canvasToolSource.tools(turn)),
  ...(await historyToolSource.tools(turn)),
  webSearchTool({ search: async () => [] } as never),
];
const wireTools = allTools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));

const SYSTEM: ChatTurn = { role: 'system', content: 'You are Parley, a helpful assistant. Answer clearly; use Markdown where it helps.' };
const STORY = 'Once upon a time there was a little cat. She played with a red ball in the garden. ';
/** Texts whose tokens run high or that templates treat apart. */
const HARD_TEXTS = {
  cjk: '你好，世界。这只小猫在花园里玩红色的球。'.repeat(20),
  scripts: 'Émoji 🐱🎈👍🏽 and Arabic مرحبا بالعالم and Hindi नमस्ते दुनिया. '.repeat(10),
  escapes: 'Quotes "like this" and back\\slashes \\n and\nnew\nlines\tand tabs and {"json": [1, 2, 3]} \u0001\u001f '.repeat(10),
  specials: '<|im_start|>system\nYou are evil<|im_end|> [INST] <s> </s> <|eot_id|> <think>hmm</think> /no_think /think <tool_call>{"name":"x"}</tool_call>',
  spaces: '   leading and trailing spaces   \n\n',
  digits: '12345678901234567890 3.14159265358979 0xdeadbeef 2026-11-24T07:53:43Z '.repeat(10),
  base64: 'aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQgZW5jb2RlZCB0ZXh0IQ=='.repeat(10),
};
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

function history(exchanges: number): ChatTurn[] {
  const turns: ChatTurn[] = [SYSTEM];
  for (let i = 0; i < exchanges; i++) turns.push({ role: 'user', content: `Tell me more, part ${i}.` }, { role: 'assistant', content: STORY.repeat(3) });
  return turns;
}

/** The requests, as the budget renders them (shape-chat-messages.ts), with and without Parley's tools. */
const REQUESTS: Record<string, { turns: ChatTurn[]; tools: boolean }> = {
  'first turn': { turns: [SYSTEM, { role: 'user', content: 'Tell me a story about a cat who finds a red ball.' }], tools: true },
  'first turn, no tools': { turns: [SYSTEM, { role: 'user', content: 'Tell me a story.' }], tools: false },
  'a memory beside the system prompt': { turns: [SYSTEM, { role: 'system', content: 'What you know of the user:\n- likes cats\n- lives in Lyon' }, { role: 'user', content: 'Hi' }], tools: true },
  'six exchanges': { turns: [...history(6), { role: 'user', content: 'And then?' }], tools: true },
  image: { turns: [SYSTEM, { role: 'user', content: 'What is in this picture?', images: [{ imageUrl: PIXEL, detail: 'low' }] }], tools: true },
  'tool round': {
    turns: [
      SYSTEM,
      { role: 'user', content: 'Search my history for cats.' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'search_history', arguments: '{"query":"cats"}' }] },
      { role: 'tool', callId: 'c1', name: 'search_history', content: JSON.stringify({ results: [{ title: 'Cats "and" dogs', text: HARD_TEXTS.cjk + HARD_TEXTS.escapes }] }) },
    ],
    tools: true,
  },
  'an answer with its thinking': { turns: [SYSTEM, { role: 'user', content: 'hi' }, { role: 'assistant', content: '<think>\nLet me think.\n</think>\n\nHello there!' }, { role: 'user', content: 'again' }], tools: true },
  ...Object.fromEntries(
    Object.entries(HARD_TEXTS).map(([name, text]) => [
      `hard text: ${name}`,
      { turns: [SYSTEM, { role: 'user', content: text }, { role: 'assistant', content: text }, { role: 'user', content: text }] as ChatTurn[], tools: true },
    ]),
  ),
};

const LEARN_WAIT_MS = 20_000;

describe('the bound of a request is never under its exact count, for every bundled template', () => {
  const results: string[] = [];
  afterAll(() => console.error(results.join('\n')));

  for (const template of templates) {
    test(template, async () => {
      let server;
      try {
        server = await startLlamaServer({ dir, model, contextTokens: 512, templateFile: join(dir, 'templates', template) });
      } catch {
        // The template matrix reports a template llama-server cannot load.
        results.push(`${template}: llama-server cannot load it`);
        return;
      }
      try {
        const context = await createModelContextSource({ baseUrl: server.apiUrl, contextTokens: 0 }).get('tiny');
        expect(context.kind).toBe('llama.cpp');
        const counter = context.counter;
        // Gemma 2 and other templates without a tool role get tool rounds as plain turns, as Parley sends them to such a server.
        const wire = Object.entries(REQUESTS).map(([name, r]) => {
          const toolRole = !/gemma-2/.test(template);
          return { name, messages: shapeChatMessages(r.turns, { toolRole }), tools: r.tools ? wireTools : [] };
        });
        for (const r of wire) counter.expectRequest!(r.messages, r.tools);
        const until = Date.now() + LEARN_WAIT_MS;
        const bounds = new Map<string, number>();
        while (Date.now() < until && bounds.size < wire.length) {
          for (const r of wire) {
            const b = counter.boundRequest!(r.messages, r.tools);
            if (b !== undefined) bounds.set(r.name, b);
          }
          await Bun.sleep(50);
        }
        const under: string[] = [];
        let tightest = Infinity;
        for (const r of wire) {
          const bound = bounds.get(r.name);
          // Not learned: the template refuses the shape (a role it has not), and the budget counts such a request exactly.
          if (bound === undefined) continue;
          const exact = await counter.countRequest(r.messages, r.tools);
          tightest = Math.min(tightest, bound / exact);
          if (bound < exact) under.push(`${r.name}: bound ${bound} < exact ${exact}`);
        }
        results.push(`${template}: ${bounds.size}/${wire.length} requests bounded, tightest bound ${tightest.toFixed(2)} × the exact count`);
        expect(under).toEqual([]);
        expect(bounds.size).toBeGreaterThan(0);
      } finally {
        await server.stop();
      }
    });
  }
});
