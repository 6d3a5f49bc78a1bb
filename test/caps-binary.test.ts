/**
 * Issue 18 items 5 and 8 through the compiled binary, against the fake Chat Completions server and
 * the fake SearxNG: everyday chat searches the web, and a server refusing tools and images (as
 * llama-server without --jinja and --mmproj does) still answers. The same against a real
 * llama-server: scripts/real-models/real-models-capabilities.test.ts.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { buildBinaryOnce } from './build-binary';
import { startFakeOpenAI } from './fakes/openai';
import { startFakeSearxng } from './fakes/searxng';
import { readEvents, startParley, type Parley } from '../scripts/real-models/parley-binary';

const openai = startFakeOpenAI();
const searx = startFakeSearxng();
afterAll(() => {
  openai.stop();
  searx.stop();
});

const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

async function turn(p: Parley, body: unknown) {
  const events: any[] = [];
  for await (const e of readEvents(await p.call('chat/stream', body))) {
    events.push(e);
    if (e.type === 'done' || e.type === 'error') break;
  }
  return { types: events.map((e) => e.type), text: events.filter((e) => e.type === 'text.delta').map((e) => e.delta).join(''), events };
}

describe('the compiled binary: capabilities and web search in chat', () => {
  test('chat/stream searches the web through SearxNG; a server refusing tools and images still answers, and the next turn too', async () => {
    const p = await startParley(await buildBinaryOnce(), {
      PARLEY_AI_PROVIDER: 'openai-chat',
      PARLEY_AI_BASE_URL: openai.url,
      PARLEY_AI_MODEL: 'small',
      PARLEY_SEARCH_PROVIDER: 'searxng',
      PARLEY_SEARXNG_URL: searx.url,
    });
    try {
      openai.chatScript = (body) =>
        body.messages.at(-1).role === 'tool'
          ? { deltas: [{ content: 'The moon.' }] }
          : { deltas: [{ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'web_search', arguments: '{"query":"tides"}' } }] }], finish_reason: 'tool_calls' };
      const searched = await turn(p, { message: 'Why tides?' });
      expect(searched.types).toEqual(['conversation.created', 'response.created', 'web_search.in_progress', 'web_search.completed', 'content_part.added', 'text.delta', 'done']);
      expect(searched.events[3].results.length).toBe(3);
      expect(searx.queries).toContain('tides');

      // Now as llama-server without --jinja and without --mmproj.
      openai.chatScript = (body) =>
        body.tools?.length
          ? { fail: 500, message: 'tools param requires --jinja flag' }
          : JSON.stringify(body.messages).includes('image_url')
            ? { fail: 500, message: 'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj' }
            : { deltas: [{ content: 'A story.' }] };
      const pictured = await turn(p, { message: 'What is this?', images: [{ imageUrl: PIXEL }] });
      expect(pictured.types.at(-1)).toBe('done');
      expect(pictured.text).toBe('*An image was left out: the AI model on this server does not accept images.*\n\nA story.');
      const conversationId = pictured.events[0].conversationId;
      const next = await turn(p, { message: 'And then?', conversationId });
      expect(next.types.at(-1)).toBe('done');
      expect(next.text).toBe('A story.');
    } finally {
      await p.stop();
    }
  }, 120_000);

  test('a template without a tool role (Gemma 2): the refused tool round is sent again with the result as a user turn, and later rounds go so at once', async () => {
    const p = await startParley(await buildBinaryOnce(), { PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: openai.url, PARLEY_AI_MODEL: 'small' });
    try {
      openai.chatScript = () => ({ deltas: [{ content: 'Noted.' }] });
      await turn(p, { message: 'Our picnic is by the lake.' });
      const toolRole = (body: any) => body.messages.some((m: any) => m.role === 'tool' || m.tool_calls);
      openai.chatScript = (body) =>
        toolRole(body)
          ? { fail: 400, message: 'Jinja Exception: Conversation roles must alternate user/assistant/user/assistant/...' }
          : body.messages.at(-1).content.startsWith('[Output of the tool search_history, not written by the user]')
            ? { deltas: [{ content: 'By the lake.' }] }
            : { deltas: [{ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'search_history', arguments: '{"query":"picnic"}' } }] }], finish_reason: 'tool_calls' };
      openai.requests.length = 0;
      const first = await turn(p, { message: 'Where is our picnic?' });
      expect(first.types).toEqual(['conversation.created', 'response.created', 'history.in_progress', 'history.completed', 'content_part.added', 'text.delta', 'done']);
      expect(first.text).toBe('By the lake.');
      const sent = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => toolRole(r.body));
      expect(sent()).toEqual([false, true, false]);
      openai.requests.length = 0;
      const next = await turn(p, { message: 'Where again?', conversationId: first.events[0].conversationId });
      expect(next.text).toBe('By the lake.');
      expect(sent()).toEqual([false, false]);
    } finally {
      await p.stop();
    }
  }, 120_000);
});
