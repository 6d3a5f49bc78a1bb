import * as z from 'zod';
import type { McpServer, ServerContext } from '@modelcontextprotocol/server';
import type { AppDeps } from '../deps';
import type { ResponseRow } from '../db/schema';
import { startResponse, cancelResponse } from '../chat/respond';
import { canSeeResponse } from '../chat/stream.routes';
import { followResponse, parseEventId } from '../chat/follow';
import { findResponseById, isTerminal } from '../chat/response.store';
import { answer, refusal, refusingAppErrors, type McpCaller } from './mcp-tool';
import { reportMarkdown, reportOf } from './research-report';
import { describeEvent } from './describe-event';

/**
 * How long one follow_research call waits for the run, by default and at most. Under the 60 s
 * most MCP clients give a request before they give up on it: a call that returns "still running"
 * with where it got to is better than one the client abandons. A client that resets its timeout
 * on progress may ask for longer.
 */
const FOLLOW_WAIT_S = 45;
const FOLLOW_WAIT_MAX_S = 600;

const ResearchId = z.string().min(1).max(100).describe('The id start_research answered (`researchId`).');

/** The research run of this id the caller may see (the rule of chat/resumeStream), else undefined. */
async function visibleResearch(deps: AppDeps, caller: McpCaller, researchId: string): Promise<ResponseRow | undefined> {
  const r = await canSeeResponse(deps, caller.user, researchId);
  return r?.kind === 'research' ? r : undefined;
}

const notFound = (id: string) => refusal(`No research run has the id "${id}" that you may see. start_research answers the id of a new one.`);

/**
 * Deep research over MCP (docs/mcp-server.md): the same turn as chat/streamDeepResearch, started,
 * followed and read by id. A run keeps going when the client leaves; its events stay in the
 * response's event log, so a client that comes back follows on from the last event it saw.
 */
export function registerResearchTools(server: McpServer, deps: AppDeps, caller: McpCaller) {
  server.registerTool(
    'start_research',
    {
      title: 'Start deep research',
      description:
        'Start a deep-research run on a question: Parley searches the web (and reads the documents it is pointed at), then writes a report that cites its sources. ' +
        'It runs in the background and takes minutes: this answers at once with a `researchId`; call follow_research with it to watch it and get the report. ' +
        'The run is also a conversation the user sees in Parley.',
      inputSchema: z.object({
        question: z.string().min(1).max(20_000).describe('What to research, in the words you would give a person.'),
        model: z.string().min(1).max(200).optional().describe("A model id from Parley's catalogue; the server's research model when left out."),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ question, model }) =>
      refusingAppErrors(async () => {
        if (!question.trim()) return refusal('The question is empty.');
        const taking = caller.limits.take(caller.user.id, 'mcp/start_research', 'ai');
        if (taking) await taking;
        const response = await startResponse(deps, {
          userId: caller.user.id,
          kind: 'research',
          message: question,
          model,
          requestId: caller.requestId,
          tier: caller.user.subscriptionTier,
        });
        const failed = isTerminal(response.status);
        const text = failed
          ? `The research could not start: ${response.error ?? 'it failed.'}`
          : `Research ${response.id} started. Call follow_research with {"researchId": "${response.id}"} to follow it to its report.`;
        return { ...answer(text, { researchId: response.id, conversationId: response.conversationId, status: response.status }), ...(failed ? { isError: true } : {}) };
      }),
  );

  server.registerTool(
    'follow_research',
    {
      title: 'Follow deep research',
      description:
        'Follow a research run: sends progress notifications as it searches, reads and writes, and answers with the report and its sources once it has finished. ' +
        `It waits at most \`waitSeconds\` (default ${FOLLOW_WAIT_S}); a run still going then answers \`done: false\` and \`lastSeq\`: call again with \`after: lastSeq\` to go on from there. ` +
        'After a lost connection, call it with the last progress value you received as `after`: no event is lost or repeated.',
      inputSchema: z.object({
        researchId: ResearchId,
        after: z.number().int().min(0).optional().describe('Go on after this event number (a progress value or `lastSeq` received before); 0 from the start.'),
        waitSeconds: z.number().int().min(1).max(FOLLOW_WAIT_MAX_S).optional().describe(`How long to wait for the run to finish before answering (default ${FOLLOW_WAIT_S}).`),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ researchId, after, waitSeconds }, ctx) => {
      const r = await visibleResearch(deps, caller, researchId);
      if (!r) return notFound(researchId);
      const followed = await follow(deps, r.id, after ?? 0, (waitSeconds ?? FOLLOW_WAIT_S) * 1000, ctx);
      const row = (await deps.store.read((tx) => findResponseById(tx, r.id))) ?? r;
      if (!followed.ended && !isTerminal(row.status)) {
        return answer(
          `Research ${r.id} is still running (${followed.lastSeq} events so far). Call follow_research again with {"researchId": "${r.id}", "after": ${followed.lastSeq}} to go on.`,
          { researchId: r.id, status: row.status, done: false, lastSeq: followed.lastSeq },
        );
      }
      const report = await reportOf(deps, row);
      return answer(reportMarkdown(report), { ...report, done: true, lastSeq: Math.max(followed.lastSeq, row.lastSeq) });
    },
  );

  server.registerTool(
    'get_research',
    {
      title: 'Get a research report',
      description: 'The status of a research run and, once it has finished, its report with its sources. Does not wait: follow_research does.',
      inputSchema: z.object({ researchId: ResearchId }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ researchId }) => {
      const r = await visibleResearch(deps, caller, researchId);
      if (!r) return notFound(researchId);
      const report = await reportOf(deps, r);
      return answer(reportMarkdown(report), { ...report, done: isTerminal(r.status) });
    },
  );

  server.registerTool(
    'cancel_research',
    {
      title: 'Cancel research',
      description: 'Stop a running research run. What it wrote so far is kept.',
      inputSchema: z.object({ researchId: ResearchId }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ researchId }) => {
      const r = await visibleResearch(deps, caller, researchId);
      if (!r) return notFound(researchId);
      if (isTerminal(r.status)) return answer(`Research ${r.id} had already ended (${r.status}).`, { researchId: r.id, cancelled: false, status: r.status });
      await cancelResponse(deps, r);
      const status = (await deps.store.read((tx) => findResponseById(tx, r.id)))?.status ?? r.status;
      return answer(`Research ${r.id} was cancelled.`, { researchId: r.id, cancelled: true, status });
    },
  );
}

/**
 * Relay a run's events after `after` as progress notifications (the progress value is the event's
 * number, so it only grows, and a client that comes back passes the last one it got), until the
 * run ends, the wait is over, or the client goes. Reads the response's event log through the same
 * follower as chat/resumeStream: every event once, in order, from any instance.
 */
async function follow(deps: AppDeps, responseId: string, after: number, waitMs: number, ctx: ServerContext): Promise<{ lastSeq: number; ended: boolean }> {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const signal = AbortSignal.any([ctx.mcpReq.signal, AbortSignal.timeout(waitMs)]);
  let lastSeq = after;
  let ended = false;
  for await (const chunk of followResponse(deps, responseId, after, signal)) {
    for (const frame of framesOf(chunk.toSSE())) {
      lastSeq = frame.seq;
      const event = frame.event;
      if (event.type === 'done' || event.type === 'error') ended = true;
      const message = describeEvent(event);
      if (message && progressToken !== undefined && !ctx.mcpReq.signal.aborted) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: frame.seq, message } }).catch(() => undefined);
      }
    }
    if (ended) break;
  }
  return { lastSeq, ended };
}

/** The data frames of a chunk the follower wrote (`id: <responseId>:<seq>` and `data: {…}`); comments and keepalives have no id. */
function framesOf(text: string): { seq: number; event: { type: string; [k: string]: unknown } }[] {
  const frames = [];
  for (const block of text.split('\n\n')) {
    let id: string | undefined;
    let data: string | undefined;
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data = line.slice(6);
    }
    const at = id && parseEventId(id);
    if (at && data) frames.push({ seq: at.seq, event: JSON.parse(data) });
  }
  return frames;
}
