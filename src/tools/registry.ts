import { estimateTokens } from '../ai/count-tokens';
import type { SourceTool, ToolApproval, ToolDef, ToolSource, ToolTurn, TurnKind } from './tool.types';
import { approvalOf, readToolSettings, sourceAllowed } from './tool-settings';
import { askFirst } from './ask-first';

/**
 * `deps.tools`: the one registry every domain contributes its tools to (STYLE.md §19; the
 * contract is src/tools/tool.types.ts, the picture docs/architecture.md, "Tools").
 */
export interface ToolRegistry {
  /** Add a domain's source (at build time). A second source with the same id is a programming error. */
  register(source: ToolSource): void;
  /** The sources, in registration order. */
  sources(): readonly ToolSource[];
  /** The tools this turn may use, in registration order, within the budget. */
  forTurn(turn: ToolTurn): Promise<ToolDef[]>;
  /**
   * Every source with the tools it offers `turn` as things stand, the admin's switches and the
   * budget aside (the admin's list: an admin marks tools "ask first" from it). A source that fails
   * or takes longer than a few seconds lists none.
   */
  catalogue(turn: ToolTurn): Promise<{ source: ToolSource; tools: ToolDef[] }[]>;
}

const DEFAULT_KINDS: readonly TurnKind[] = ['chat', 'research'];
export const DEFAULT_PRIORITY = 50;
const SOURCE_ID = /^[a-z0-9_]{1,40}$/;
/** How long the admin's list waits for one source. */
const CATALOGUE_WAIT_MS = 3000;

export function createToolRegistry(initial: readonly ToolSource[] = []): ToolRegistry {
  const sources: ToolSource[] = [];
  const registry: ToolRegistry = {
    register(source) {
      if (!SOURCE_ID.test(source.id)) throw new Error(`a tool source's id is 1–40 of [a-z0-9_]: "${source.id}"`);
      if (sources.some((s) => s.id === source.id)) throw new Error(`the tool source "${source.id}" is registered twice`);
      sources.push(source);
    },
    sources: () => sources,
    async forTurn(turn) {
      const settings = await turn.deps.store.read(readToolSettings);
      const asked = sources.filter(
        (s) => (s.kinds ?? DEFAULT_KINDS).includes(turn.kind) && sourceAllowed(settings.sources[s.id], s, turn.deps.config, turn.user.subscriptionTier) && assistantAllowsSource(turn, s.id),
      );
      // Asked together: one slow source (an MCP server listing its tools) is the turn's only wait.
      const offered = await Promise.all(asked.map((s) => offeredBy(turn, s)));
      const seen = new Set<string>();
      const groups: { source: ToolSource; tools: ToolDef[] }[] = [];
      for (const [i, source] of asked.entries()) {
        const tools: ToolDef[] = [];
        for (const tool of offered[i]!) {
          if (!assistantAllowsTool(turn, source.id, tool.name)) continue;
          // Names are what the model calls: the first source to offer one keeps it.
          if (seen.has(tool.name)) {
            turn.deps.log.warn('a tool name is offered twice: the later one is left out', { source: source.id, tool: tool.name, responseId: turn.responseId });
            continue;
          }
          const def = defOf(source, tool, approvalOf(settings, source.id, tool.name, tool.approval ?? 'never'));
          if (def.approval === 'ask' && !turn.stream) {
            // Nobody to ask (a group's answer is nobody's own turn): an "ask first" tool is not offered.
            turn.deps.log.info('an "ask first" tool is left out: this turn cannot ask', { source: source.id, tool: tool.name, kind: turn.kind });
            continue;
          }
          seen.add(tool.name);
          tools.push(def.approval === 'ask' ? askFirst(turn, turn.stream!, def) : def);
        }
        if (tools.length) groups.push({ source, tools });
      }
      return withinBudget(turn, groups, turn.deps.config.toolsMaxTokens).flatMap((g) => g.tools);
    },
    async catalogue(turn) {
      const settings = await turn.deps.store.read(readToolSettings);
      return Promise.all(
        sources.map(async (source) => {
          const offered = await Promise.race([offeredBy(turn, source), Bun.sleep(CATALOGUE_WAIT_MS).then(() => [] as SourceTool[])]);
          return { source, tools: offered.map((t) => defOf(source, t, approvalOf(settings, source.id, t.name, t.approval ?? 'never'))) };
        }),
      );
    },
  };
  for (const s of initial) registry.register(s);
  return registry;
}

async function offeredBy(turn: ToolTurn, source: ToolSource): Promise<SourceTool[]> {
  try {
    return await source.tools(turn);
  } catch (err) {
    turn.deps.log.warn('a tool source failed: its tools are left out of this turn', {
      source: source.id,
      responseId: turn.responseId,
      cause: err instanceof Error ? err.message : String(err),
    });
    return [];
  }
}

function defOf(source: ToolSource, tool: SourceTool, approval: ToolApproval): ToolDef {
  const { label, approval: _offered, sizeHint, ...ai } = tool;
  return {
    ...ai,
    source: source.id,
    label: label ?? tool.name,
    approval,
    sizeHint: sizeHint ?? estimateTokens(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters })),
  };
}

/**
 * The sources whose tools fit `max` tokens together: while they do not, the lowest-priority
 * source (the last registered among equals) is dropped whole, and the log says which. A source
 * is dropped whole since half an MCP server's tools, or read_file without search_files, would
 * confuse the model more than their absence.
 */
function withinBudget<G extends { source: ToolSource; tools: ToolDef[] }>(turn: ToolTurn, groups: G[], max: number): G[] {
  const cost = (g: G) => g.tools.reduce((n, t) => n + t.sizeHint, 0);
  let total = groups.reduce((n, g) => n + cost(g), 0);
  if (total <= max) return groups;
  const byPriority = groups.map((g, i) => ({ g, i })).sort((a, b) => (a.g.source.priority ?? DEFAULT_PRIORITY) - (b.g.source.priority ?? DEFAULT_PRIORITY) || b.i - a.i);
  const dropped = new Set<G>();
  for (const { g } of byPriority) {
    if (total <= max) break;
    dropped.add(g);
    total -= cost(g);
  }
  turn.deps.log.warn('tools left out of a turn: their definitions would pass PARLEY_TOOLS_MAX_TOKENS', {
    responseId: turn.responseId,
    max,
    sources: [...dropped].map((g) => ({ source: g.source.id, tools: g.tools.length, tokens: cost(g) })),
  });
  return groups.filter((g) => !dropped.has(g));
}

/**
 * An assistant naming sources or tools allows those only. Its MCP servers decide the `mcp`
 * source when it names them: some, that source with every tool of those servers; `[]`, none;
 * null, its `tools` decide as for any source. Knowledge files bring the `files` source with them
 * (an assistant told to know something that could not read it would be no use).
 */
function assistantAllowsSource(turn: ToolTurn, sourceId: string): boolean {
  const a = turn.assistant;
  if (sourceId === 'mcp' && a?.mcpServerIds) return a.mcpServerIds.length > 0;
  if (sourceId === 'files' && a?.knowledgeFileIds.length) return true;
  if (!a || a.tools === null) return true;
  // A tool named alone lets its source be asked; the tool filter then keeps that tool only.
  return a.tools.length > 0;
}

function assistantAllowsTool(turn: ToolTurn, sourceId: string, name: string): boolean {
  const a = turn.assistant;
  if (sourceId === 'mcp' && a?.mcpServerIds) return true;
  if (sourceId === 'files' && a?.knowledgeFileIds.length) return true;
  if (!a || a.tools === null) return true;
  return a.tools.includes(sourceId) || a.tools.includes(name);
}
