/**
 * Figure 2, read: `chat/canWriteConversation` by API key against baseline (b), a raw Bun.serve +
 * bun:sqlite indexed SELECT. Target: ≥ 70 % of (b). The conversation is a group's (its members
 * are writers), so the answer is `canWrite: true` through the real lookup.
 * A reference row, `preferences/get`, shows the cost every operation pays (API key lookup, user
 * row, framework) against the same floor; it has no target.
 */
import { startBaseline } from '../lib/baselines';
import { assertClean, best, fmtInt, latencyDetail, loadPoint, ratioRow, type BenchContext, type Figure } from '../lib/context';
import type { LoadResult } from '../lib/load';
import { callOperation, operationExists, startParley, type Parley } from '../lib/parley';
import type { Row } from '../lib/report';

const CONNECTIONS = 32;
const TARGET = 0.7;

/** The measured read (bench/cluster.ts runs it on PostgreSQL too). */
export const canWriteSpec = (parley: Parley, conversationId: string) => ({
  url: `${parley.url}/api/chat/canWriteConversation`,
  headers: { 'x-api-key': parley.key },
  body: { conversationId },
  connections: CONNECTIONS,
});

/**
 * A conversation the bench user may write: a group's conversation (members are writers), else
 * the one `chat/stream` creates before it reports that no AI provider is configured.
 */
export async function findConversation(parley: Parley): Promise<{ id: string; note: string }> {
  if (await operationExists(parley, 'groupChat/createGroupChat')) {
    const group = await callOperation(parley, 'groupChat/createGroupChat', { name: 'Read benchmark' });
    return { id: group.conversationId, note: "a group's conversation, the caller a member" };
  }
  const stream = await parley.call('chat/stream', { message: 'Read benchmark' });
  const id = /"conversationId":"([^"]+)"/.exec(String(stream.body))?.[1];
  if (id) return { id, note: "the caller's own conversation" };
  return { id: '00000000-0000-7000-8000-000000000000', note: 'unknown conversation (canWrite false): no way to create one' };
}

export const readFigure: Figure = {
  id: 'read',
  title: '2 read',
  async run(ctx: BenchContext): Promise<Row[]> {
    const figure = '2 read';
    const base = await startBaseline(ctx, 'read-server.ts');
    const parley = await startParley(ctx.bin);
    try {
      const bSpec = { url: base.url, body: { conversationId: 'conversation-42' }, connections: CONNECTIONS };
      const headers = { 'x-api-key': parley.key };
      const prefsSpec = { url: `${parley.url}/api/preferences/get`, headers, body: {}, connections: CONNECTIONS };
      const hasRead = await operationExists(parley, 'chat/canWriteConversation');
      const conversation = hasRead ? await findConversation(parley) : undefined;
      const readSpec = conversation && canWriteSpec(parley, conversation.id);
      if (readSpec) {
        const answer = await callOperation(parley, 'chat/canWriteConversation', readSpec.body);
        ctx.log(`canWriteConversation answers ${JSON.stringify(answer)} for ${conversation!.note}`);
        conversation!.note += ` (canWrite ${answer.canWrite})`;
      }
      ctx.log('warming up');
      await loadPoint(ctx, { ...bSpec, durationS: 1 });
      await loadPoint(ctx, { ...prefsSpec, durationS: 1 });
      if (readSpec) await loadPoint(ctx, { ...readSpec, durationS: 1 });

      let b: LoadResult | undefined, prefs: LoadResult | undefined, read: LoadResult | undefined;
      for (let round = 0; round < ctx.rounds; round++) {
        ctx.log(`round ${round + 1}/${ctx.rounds}`);
        b = best(b, await loadPoint(ctx, bSpec));
        if (readSpec) read = best(read, await loadPoint(ctx, readSpec));
        prefs = best(prefs, await loadPoint(ctx, prefsSpec));
      }
      assertClean('preferences/get', prefs!);
      if (read) assertClean('chat/canWriteConversation', read);
      ctx.raw.read = { baselineB: b, canWriteConversation: read, preferencesGet: prefs, conversation: conversation?.note };
      const row = (measure: string, r: LoadResult, target: boolean, note = ''): Row => {
        const base: Row = {
          figure,
          measure,
          parley: `${fmtInt(r.rps)} req/s`,
          baseline: `${fmtInt(b!.rps)} req/s`,
          detail: `${latencyDetail(r)}; (b) ${latencyDetail(b!)}${note}`,
        };
        return target ? ratioRow({ ...base, target: `≥ ${TARGET.toFixed(2)}` }, r.rps / b!.rps, TARGET) : { ...base, ratio: r.rps / b!.rps, target: 'reference' };
      };
      return [
        read
          ? row(`canWriteConversation, ${CONNECTIONS} conn`, read, true, `; ${conversation!.note}`)
          : { figure, measure: 'canWriteConversation', skipped: 'operation not available: chat/canWriteConversation' },
        row(`preferences/get (auth + read, reference), ${CONNECTIONS} conn`, prefs!, false),
      ];
    } finally {
      await Promise.all([base.stop(), parley.stop()]);
    }
  },
};
