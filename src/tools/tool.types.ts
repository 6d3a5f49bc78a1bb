import type { AiProvider, AiTool, StreamChatOptions } from '../ai/ai.types';
import type { AppDeps } from '../deps';
import type { Config } from '../config';
import type { TurnStream } from './ask-first';

/**
 * The contract between the tool registry (`deps.tools`, registry.ts) and the domains that
 * contribute tools to it (docs/architecture.md, "Tools: contributed to one registry").
 *
 * To contribute tools, a domain writes one `ToolSource` and registers it where the app's
 * dependencies are built (src/build-deps.ts):
 *
 *   export const canvasToolSource: ToolSource = {
 *     id: 'canvas',
 *     label: 'Canvas',
 *     async tools(turn) {
 *       return [{ name: 'generate_canvas', description: '…', parameters: {…}, run: async (args, emit, callId, callKey) => '…' }];
 *     },
 *   };
 *
 * `tools(turn)` is asked once per turn (and per round of a group answer), so it returns what this
 * user may use right now: it may read the database (`turn.deps.store`) or ask a connection, but
 * should answer quickly; a source that throws is left out of that turn and logged, never the
 * turn's failure. A source with per-user state (MCP: one connection per user and server) keeps
 * it itself, keyed by `turn.user.id`.
 */

/** The kinds of turn that ask for tools. */
export type TurnKind = 'chat' | 'research' | 'group';

/** What a turn's assistant (src/assistants/) allows; absent: no assistant, every source the admin allows. */
export interface TurnAssistant {
  id: string;
  /**
   * Source ids (`memory`, `web_search`, `mcp`…) and tool names (`generate_canvas`) it may use;
   * null: whatever the admin allows.
   */
  tools: string[] | null;
  /**
   * MCP servers (their ids) whose tools it gets, read by the registry and the MCP source; null:
   * whatever its user has (as `tools` allows); []: none.
   */
  mcpServerIds: string[] | null;
  /**
   * Documents it always searches (its knowledge), checked for it at the start of the turn: the
   * files source offers read_file and search_files over them, even to a user who has none.
   */
  knowledgeFileIds: string[];
}

/** Who and what a turn is, as the sources need it. */
export interface ToolTurn {
  deps: AppDeps;
  kind: TurnKind;
  user: { id: string; subscriptionTier: string; enableMemories: boolean };
  conversationId: string;
  /** The response being written; a group answer: the group message it answers. */
  responseId: string;
  /** Which adapter runs the turn: a source may leave out what the provider does itself. */
  provider: AiProvider['name'];
  assistant?: TurnAssistant;
  /** A problem the turn survives (a failed web search), for the operator's log with the turn's ids. */
  warn?: StreamChatOptions['warn'];
  /**
   * The response's event stream and abort signal, when the turn can ask its user before a call
   * (chat and research turns; a group answer cannot, so it is offered no "ask first" tool).
   */
  stream?: TurnStream;
  /** The API key the turn's request came with: the model calls its tools make are metered under it (docs/usage.md). */
  apiKeyId?: string;
  /** The turn's end (cancelled, lease lost): a tool waiting on another server (MCP) stops waiting with it. */
  signal?: AbortSignal;
}

/** A tool as a source offers it: an `AiTool`, with what the registry cannot guess. */
export interface SourceTool extends AiTool {
  /** A short name for people (the admin's list, the approval prompt); default: the tool's name. */
  label?: string;
  /** 'ask': the source itself asks first for every call (e.g. an MCP server an admin marked so). */
  approval?: ToolApproval;
  /** Tokens its definition costs in a request; default: estimated from its JSON. */
  sizeHint?: number;
}

export type ToolApproval = 'never' | 'ask';

/** A tool as the registry hands it to a turn. Providers see an `AiTool`. */
export interface ToolDef extends AiTool {
  /** The id of the source that contributed it. */
  source: string;
  label: string;
  approval: ToolApproval;
  sizeHint: number;
}

export interface ToolSource {
  /** Unique, `[a-z0-9_]`: what admins switch and assistants name (`memory`, `files`, `mcp`). */
  id: string;
  /** For people: the admin's list, the assistant editor. */
  label: string;
  /**
   * When a turn's tools do not fit its budget, sources of the lowest priority are dropped first
   * (whole). Default 50; the built-in sources are 40–80, so an MCP server's dozens of tools
   * (default priority) go before a user's memory does.
   */
  priority?: number;
  /** The turns it serves; default chat and research. */
  kinds?: readonly TurnKind[];
  /**
   * Whether it is on where the admin has not switched it (default true): a source that costs the
   * server much (the code interpreter's sandboxes) starts off, unless a setting seeds it on.
   */
  enabledByDefault?(config: Config): boolean;
  /** For the admin's list (admin/getToolSettings): what it lacks to offer anything, and what it costs. */
  status?(deps: AppDeps): Promise<SourceStatus>;
  tools(turn: ToolTurn): Promise<SourceTool[]>;
}

export interface SourceStatus {
  /** Why it can offer nothing here (no connection of its kind, its runtime not installed); absent: it can. */
  unavailable?: string;
  /** What turning it on costs or needs, in a line for the admin. */
  note?: string;
}
