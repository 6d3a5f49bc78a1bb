import { ResourceNotFoundError, ResourceTemplate, type McpServer } from '@modelcontextprotocol/server';
import type { AppDeps } from '../deps';
import { listResearchOf } from '../chat/research.store';
import { canSeeResponse } from '../chat/stream.routes';
import { reportMarkdown, reportOf } from './research-report';
import type { McpCaller } from './mcp-tool';

/** How many of the user's research runs resources/list names: the most recent. */
const LISTED = 50;
const TITLE_CHARS = 80;

export const reportUri = (researchId: string) => `parley://research/${researchId}`;

const titleOf = (question: string) => {
  const line = question.trim().split('\n')[0] ?? '';
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line || 'Research';
};

/**
 * Each research run's report as a resource, `parley://research/<id>` (Markdown with its sources),
 * so a client can attach a finished report to a conversation of its own. Listed: the user's most
 * recent runs; the id completes from them.
 */
export function registerReportResources(server: McpServer, deps: AppDeps, caller: McpCaller) {
  const recent = () => deps.store.read((tx) => listResearchOf(tx, caller.user.id, LISTED));
  server.registerResource(
    'research-report',
    new ResourceTemplate('parley://research/{researchId}', {
      list: async () => ({
        resources: (await recent()).map((r) => ({
          uri: reportUri(r.id),
          name: titleOf(r.input.message),
          description: `Deep research (${r.status}), started ${new Date(r.createdAt).toISOString()}`,
          mimeType: 'text/markdown',
        })),
      }),
      complete: {
        researchId: async (value) => (await recent()).map((r) => r.id).filter((id) => id.startsWith(value)),
      },
    }),
    {
      title: 'Research report',
      description: 'The report of one of your deep-research runs, with its sources, in Markdown.',
      mimeType: 'text/markdown',
    },
    async (uri, { researchId }) => {
      const id = Array.isArray(researchId) ? researchId[0] : researchId;
      const r = id ? await canSeeResponse(deps, caller.user, id) : undefined;
      if (!r || r.kind !== 'research') throw new ResourceNotFoundError(uri.href);
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: reportMarkdown(await reportOf(deps, r)) }] };
    },
  );
}
