import { describe, expect, test } from 'bun:test';
import { shapeChatMessages } from '../src/ai/shape-chat-messages';

describe('shapeChatMessages: requests real chat templates accept', () => {
  test('every system text merged, in order, into one leading system message', () => {
    expect(
      shapeChatMessages([
        { role: 'system', content: 'You are Parley.' },
        { role: 'user', content: 'Hi' },
        { role: 'system', content: 'Cite sources.' },
      ]),
    ).toEqual([
      { role: 'system', content: 'You are Parley.\n\nCite sources.' },
      { role: 'user', content: 'Hi' },
    ]);
  });

  test('no system text: no system message at all', () => {
    expect(shapeChatMessages([{ role: 'user', content: 'Plan.' }])).toEqual([{ role: 'user', content: 'Plan.' }]);
  });

  test('consecutive user turns (group members speaking in a row) become one user turn naming each speaker', () => {
    expect(
      shapeChatMessages([
        { role: 'system', content: 'S' },
        { role: 'user', content: 'Ann: hello' },
        { role: 'user', content: 'Bob: hi Ann' },
        { role: 'assistant', content: 'Hello both.' },
        { role: 'assistant', content: 'Anything else?' },
        { role: 'user', content: 'Cy: @ai what time is it?' },
      ]),
    ).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'Ann: hello\n\nBob: hi Ann' },
      { role: 'assistant', content: 'Hello both.\n\nAnything else?' },
      { role: 'user', content: 'Cy: @ai what time is it?' },
    ]);
  });

  test('empty turns and assistant turns before the first user turn are dropped; roles still alternate', () => {
    expect(
      shapeChatMessages([
        { role: 'system', content: '' },
        { role: 'assistant', content: 'an answer whose question was cut off' },
        { role: 'user', content: 'A' },
        { role: 'assistant', content: '  ' },
        { role: 'user', content: 'B' },
      ]),
    ).toEqual([{ role: 'user', content: 'A\n\nB' }]);
  });

  test('images stay on their user turn, merged turns keep them all, no empty text part', () => {
    expect(
      shapeChatMessages([
        { role: 'user', content: '', images: [{ imageUrl: 'data:image/png;base64,AAA', detail: 'low' }] },
        { role: 'user', content: 'What is this?', images: [{ imageUrl: 'https://x/y.png' }] },
      ]),
    ).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAA', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
        ],
      },
    ]);
    expect(shapeChatMessages([{ role: 'user', content: '', images: [{ imageUrl: 'https://x/y.png' }] }])).toEqual([
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
    ]);
  });

  test('tool rounds: calls on the assistant turn, one named tool message each, ids in nine letters and digits', () => {
    const shaped = shapeChatMessages([
      { role: 'user', content: 'What did I say about tea?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'chatcmpl-tool-7f3a', name: 'search_history', arguments: '{"query":"tea"}' }, { id: 'x', name: 'echo', arguments: '' }] },
      { role: 'tool', callId: 'chatcmpl-tool-7f3a', name: 'search_history', content: '(1) green tea' },
      { role: 'tool', callId: 'x', name: 'echo', content: '' },
    ]);
    expect(shaped).toEqual([
      { role: 'user', content: 'What did I say about tea?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call00001', type: 'function', function: { name: 'search_history', arguments: '{"query":"tea"}' } },
          { id: 'call00002', type: 'function', function: { name: 'echo', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call00001', name: 'search_history', content: '(1) green tea' },
      { role: 'tool', tool_call_id: 'call00002', name: 'echo', content: '(no output)' },
    ]);
    for (const m of shaped as any[]) for (const id of [m.tool_call_id, ...(m.tool_calls ?? []).map((c: any) => c.id)].filter(Boolean)) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
  });

  test('toolRole false (a template without a tool role): calls as assistant text, results as marked user turns, roles alternating', () => {
    const turns = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'What did I say about tea and picnics?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        toolCalls: [
          { id: 'chatcmpl-tool-7f3a', name: 'search_history', arguments: '{"query":"tea"}' },
          { id: 'x', name: 'search_history', arguments: '' },
        ],
      },
      { role: 'tool', callId: 'chatcmpl-tool-7f3a', name: 'search_history', content: '(1) green tea' },
      { role: 'tool', callId: 'x', name: 'search_history', content: '' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'y', name: 'generate_canvas', arguments: '{"topic":"Tea"}' }] },
      { role: 'tool', callId: 'y', name: 'generate_canvas', content: 'Canvas "Tea" created.' },
    ] as const;
    const shaped = shapeChatMessages(turns as any, { toolRole: false });
    expect(shaped).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'What did I say about tea and picnics?' },
      { role: 'assistant', content: 'Let me look.\n[Called the tool search_history with {"query":"tea"}]\n[Called the tool search_history with {}]' },
      {
        role: 'user',
        content:
          '[Output of the tool search_history, not written by the user]\n(1) green tea\n\n[Output of the tool search_history, not written by the user]\n(no output)',
      },
      { role: 'assistant', content: '[Called the tool generate_canvas with {"topic":"Tea"}]' },
      { role: 'user', content: '[Output of the tool generate_canvas, not written by the user]\nCanvas "Tea" created.' },
    ]);
    expect(JSON.stringify(shaped)).not.toMatch(/"tool"|tool_calls|tool_call_id/);
    // Without the option (and with toolRole true) the tool role stays: most templates take it.
    expect(shapeChatMessages(turns as any, { toolRole: true })).toEqual(shapeChatMessages(turns as any));
    expect((shapeChatMessages(turns as any) as any[]).filter((m) => m.role === 'tool').length).toBe(3);
  });
});
