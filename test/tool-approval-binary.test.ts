/**
 * "Ask first" across a SIGKILL, through the compiled binary (docs/chat.md, "Tool approval"): a
 * turn waits for the user's answer, the process dies where it stands, `parley serve` starts again
 * on the same data; the resumed stream shows the prompt again, and the answer given then lets the
 * turn go on to its end. openai-responses, the provider whose turns survive a restart. Both stores
 * (on PostgreSQL the new process takes the turn over once the dead one's lease runs out).
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBinaryServer } from './support/binary-server';
import { SseReader, typesOf } from './sse';
import { functionCallEvents, startFakeOpenAI, textEvents } from './fakes/openai';

setDefaultTimeout(120_000);

const openai = startFakeOpenAI();
afterAll(() => openai.stop());

const ADMIN = 'admin@example.org';

describe('ask first through the compiled binary', () => {
  test('waiting for approval, SIGKILL, restart: the prompt comes back on resume, the answer goes through, the turn ends', async () => {
    let round = 0;
    openai.responsesScript = () => (round++ === 0 ? functionCallEvents('call_1', 'search_history', { query: 'tea' }) : textEvents('Done.', 1));
    const first = await startBinaryServer(
      { PARLEY_AI_PROVIDER: 'openai-responses', PARLEY_AI_BASE_URL: openai.url, PARLEY_AI_API_KEY: 'sk-test' },
      [],
      { admins: [ADMIN] },
    );
    let server = first;
    try {
      const set = await first.postAs(ADMIN, 'admin/setToolSettings', { tools: [{ name: 'search_history', approval: 'ask' }] });
      expect(set.status).toBe(200);
      const reader = new SseReader(await first.post('chat/stream', { message: 'what tea do I like?' }));
      const head = await reader.until('tool_call.approval_required');
      const responseId = head[1]!.data.responseId as string;
      expect(head.at(-1)!.data).toMatchObject({ itemId: 'call_1', name: 'search_history', arguments: { query: 'tea' } });

      await first.kill();
      await reader.close().catch(() => {});
      server = await first.restart();

      const again = new SseReader(await server.post('chat/resumeStream', { responseId }));
      const replayed = await again.until('tool_call.approval_required');
      expect(replayed.map((f) => f.data)).toEqual(head.map((f) => f.data));
      const answered = await server.post('chat/approveToolCall', { responseId, itemId: 'call_1', decision: 'approve' });
      expect(await answered.json()).toEqual({ success: true, status: 'approved' });
      // On PostgreSQL the turn waits for the dead process's lease to run out, long enough for the
      // stream's keepalive frames (no id, not stored) to come between.
      const rest = (await again.all()).filter((f) => f.data.type !== 'keepalive');
      expect(typesOf(rest)).toEqual(['tool_call.approval_resolved', 'history.in_progress', 'history.completed', 'content_part.added', 'text.delta', 'done']);
      // The prompt was stored once, whatever the restart did.
      const whole = await new SseReader(await server.post('chat/resumeStream', { responseId })).all();
      expect(typesOf(whole).filter((t) => t === 'tool_call.approval_required')).toHaveLength(1);
      expect(typesOf(whole).at(-1)).toBe('done');
    } finally {
      await server.stop();
    }
  });
});
