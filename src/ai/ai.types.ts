/**
 * The AI provider layer's small, stable interface. Chat, deep research and group AI follow-ups
 * all talk to a model through `AiProvider.streamChat`, which yields events of the interface's
 * deep-research union (docs/research.md has the upstream → event mapping).
 */

export interface WebSearchResult {
  link: string;
  title: string;
  snippet: string;
}

/** The events of the spec's "Deep-research stream" union that a provider can produce. */
export type AiEvent =
  | { type: 'content_part.added' }
  | { type: 'text.delta'; delta: string }
  | { type: 'reasoning_text.delta'; delta: string }
  | { type: 'reasoning_text.done' }
  | { type: 'web_search.in_progress'; itemId: string; query: string; numResults?: number; country?: string }
  | { type: 'web_search.completed'; results: WebSearchResult[] }
  /**
   * Parley's own kind (the union's tail is open, interface.md "Deep-research stream"): a page the
   * research loop read, numbered `n` as the report cites it (`[n]`); `read` is false when the page
   * could not be read and its search snippet is cited instead.
   */
  | { type: 'web_page.read'; itemId: string; n: number; url: string; title: string; read: boolean }
  | {
      type: 'image_generation.in_progress';
      itemId: string;
      outputFormat?: 'png' | 'jpeg' | 'webp';
      size?: '1024x1024' | '1024x1536' | '1536x1024';
      prompt?: string;
    }
  /** `itemId` and the images' `fileId`, `mimeType`, `width`, `height`: Parley's additions when the image is the user's file (docs/files.md). */
  | { type: 'image_generation.completed'; itemId?: string; images: AiEventImage[]; model: string }
  /** Parley's own kind: the `generate_image` tool failed (the union has `.error` for edits only). */
  | { type: 'image_generation.error'; itemId: string; error: string }
  | { type: 'edit_image.in_progress'; itemId: string; prompt: string; fileId: string }
  | { type: 'edit_image.completed'; itemId: string; images: AiEventImage[]; model: string }
  | { type: 'edit_image.error'; itemId: string; error: string }
  /** `generate_video`, Parley's own tool (docs/video.md); `itemId` and the video's `fileId`, `mimeType` on `.completed` are Parley's additions. */
  | { type: 'generate_video.in_progress'; itemId: string; prompt: string; negative_prompt?: string; aspect_ratio?: '16:9' | '1:1' | '9:16' }
  | { type: 'generate_video.completed'; itemId: string; video: { url: string; fileId: string; mimeType: string }; model: string }
  | { type: 'generate_video.error'; itemId: string; error: string }
  | { type: 'history.in_progress'; itemId: string; query: string }
  | { type: 'history.completed'; results: { text: string }[] }
  // Parley's own code interpreter (src/code/) adds what ran and what it gave; OpenAI's hosted one
  // (responses-mapper.ts) has only the item's id (docs/code-interpreter.md, "Events").
  | { type: 'code_interpreter.in_progress'; itemId: string; language?: CodeLanguage; code?: string }
  | { type: 'code_interpreter.completed'; itemId?: string; language?: CodeLanguage; output?: string; error?: string; files?: CodeFile[] }
  | { type: 'generate_canvas.in_progress'; itemId: string; topic: string; goal?: string }
  /** Parley's own kinds: the memory tools' activity, shown when the user's `showMemoryToolOutput` is on (docs/memory.md). */
  | { type: 'memory.in_progress'; itemId: string; action: MemoryAction }
  | { type: 'memory.completed'; itemId: string; action: MemoryAction; memoryId: string; content: string }
  | { type: 'memory.error'; itemId: string; action: MemoryAction; error: string }
  | { type: 'read_file.in_progress'; itemId: string; fileId: string; filename?: string }
  | { type: 'read_file.completed'; success: boolean; content?: string; error?: string }
  /** Parley's own kinds: the `search_files` tool over the user's documents (docs/files.md). */
  | { type: 'file_search.in_progress'; itemId: string; query: string }
  | { type: 'file_search.completed'; itemId: string; results: { fileId: string; filename: string; page: number | null }[] }
  | { type: 'widget.created'; widgetId: string; widgetType: string; responseId: string }
  /**
   * Parley's own kinds: a call of an "ask first" tool waits for the user's answer
   * (`chat/approveToolCall`), then how it was answered (docs/chat.md, "Tool approval").
   */
  | { type: 'tool_call.approval_required'; itemId: string; name: string; label: string; arguments: Record<string, unknown> }
  | { type: 'tool_call.approval_resolved'; itemId: string; decision: 'approved' | 'denied'; decidedBy: 'user' | 'timeout' | 'ended' }
  /** Parley's own kinds: a call of an MCP server's tool (docs/mcp.md); `server` and `tool` as the server names them. */
  | { type: 'mcp_call.in_progress'; itemId: string; server: string; tool: string; arguments: Record<string, unknown> }
  | { type: 'mcp_call.completed'; itemId: string; content: McpContent[] }
  | { type: 'mcp_call.error'; itemId: string; error: string }
  | { type: 'error'; message: string };

/** What an MCP tool's result showed (docs/mcp.md, "Results"): an image is the user's file by then. */
export type McpContent =
  | { type: 'text'; text: string }
  | { type: 'image'; fileId: string; mimeType: string; width?: number; height?: number }
  | { type: 'audio'; mimeType: string }
  | { type: 'resource'; uri: string; mimeType?: string; text?: string }
  | { type: 'resource_link'; uri: string; name?: string };

export type AiEventType = AiEvent['type'];

export type AiEventImage = { type: 'url' | 'base64'; data: string; fileId?: string; mimeType?: string; width?: number; height?: number };

export type MemoryAction = 'save' | 'update' | 'forget';

export interface AiImage {
  imageUrl: string;
  detail?: 'auto' | 'high' | 'low';
}

export interface AiMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  images?: AiImage[];
  /**
   * A system text the context budget may cut, when the request does not fit, to this share of
   * the prompt's room: whole lines from its end; its first line is a heading, left out with the
   * last line under it (fit-context.ts). The user's memories, newest first, are one.
   */
  share?: number;
}

/**
 * A function the model may call. `run` may emit events (e.g. `generate_canvas.in_progress`,
 * `widget.created`) and returns the text handed back to the model as the call's output.
 */
export type CodeLanguage = 'python' | 'javascript';

/** A file code wrote, kept as the user's file (docs/code-interpreter.md). */
export interface CodeFile {
  fileId: string;
  filename: string;
  contentType: string;
  size: number;
}

export interface AiTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /**
   * `callId` is the model's id for the call (what events show as `itemId`); `callKey` names the
   * call uniquely within the response, across rounds and restarts (upstream round and call id),
   * for tools whose effect must happen once even if a restart runs the call again.
   */
  run(args: Record<string, unknown>, emit: (event: AiEvent) => void, callId: string, callKey: string): Promise<string>;
}

/** What a function tool returned for one call of one upstream response (a tool round). */
export interface ToolCallOutput {
  upstreamId: string;
  callId: string;
  output: string;
}

/** Where an upstream background response stands, so a restarted server can pick it up. */
export interface UpstreamCursor {
  /** The provider's response id (OpenAI `resp_...`). */
  upstreamId: string;
  /** The last upstream `sequence_number` whose events were relayed. */
  sequenceNumber: number;
}

export interface StreamChatOptions {
  model?: string;
  messages: AiMessage[];
  /**
   * Let the model search the web with the provider's own hosted tool (OpenAI Responses:
   * `web_search_preview`). Other providers have none and ignore it: their `web_search` is a
   * function like any other, from the tool registry (src/tools/, source `web_search`).
   */
  webSearch?: boolean;
  /** Deep research: the research model, and on `openai-chat` Parley's own search → read → report loop. */
  research?: boolean;
  tools?: AiTool[];
  signal?: AbortSignal;
  /** Called whenever the upstream position advances (only providers that can resume call it). */
  onCursor?: (cursor: UpstreamCursor) => void;
  /** Continue an upstream response after a restart instead of starting one. */
  resumeFrom?: UpstreamCursor;
  /** With `resumeFrom`: outputs of function tools the response already ran, used instead of running them again. */
  toolOutputs?: readonly ToolCallOutput[];
  /** Called with a function tool's output right after its events were handed over (providers that can resume). */
  onToolOutput?: (toolOutput: ToolCallOutput) => void;
  /** A problem the turn survives (a failed web search), with details for the operator's log. */
  warn?: (msg: string, fields: Record<string, unknown>) => void;
  /**
   * What each upstream call of the turn used (every tool round, research's planning calls and its
   * report), called once per call as it ends, so usage metering records it then (src/usage/).
   */
  onUsage?: (usage: CallUsage) => void;
  /** The assistant's sampling settings (docs/assistants.md, "Parameters"); absent ones: the provider's defaults. */
  sampling?: Sampling;
}

/** Sampling settings each provider sends in its own words (temperature, top_p, the answer's token limit). */
export interface Sampling {
  temperature?: number;
  topP?: number;
  /** At most this many output tokens: lowers the limit Parley would send otherwise, never raises it past the context. */
  maxOutputTokens?: number;
}

/** One upstream call's token counts, as its provider reported them, or counted by Parley (`estimated`) when it reported none. */
export interface CallUsage {
  /** Every input token, those read from the provider's prompt cache included. */
  inputTokens: number;
  /** Every output token, reasoning included. */
  outputTokens: number;
  /** Input read from the provider's prompt cache. */
  cachedTokens: number;
  /** Output spent thinking, when the provider says. */
  reasoningTokens: number;
  estimated: boolean;
}

export interface AiProvider {
  readonly name: 'openai-responses' | 'openai-chat' | 'anthropic';
  /** Whether `resumeFrom` works (the upstream keeps running without us). */
  readonly canResume: boolean;
  /**
   * Stream one AI turn. Ends after the last output event; failures are thrown (the caller turns
   * them into an `error` event). Aborting `signal` stops the turn (and cancels it upstream).
   */
  streamChat(opts: StreamChatOptions): AsyncIterable<AiEvent>;
  /** The same events grouped as they arrived (optional; chat's relay uses it to save an await per event). */
  streamChatBatches?(opts: StreamChatOptions): AsyncIterable<AiEvent[]>;
}

/**
 * Abort reason used when Parley itself stops (shutdown, tests simulating a crash): the upstream
 * response is left running so the next start can resume it. Any other abort cancels upstream.
 */
export const SHUTDOWN_REASON = 'parley-shutdown';

/**
 * A failure the user may see verbatim in an `error` event (no secrets, no stack): a short,
 * human sentence. `detail` is what the upstream said (a template's traceback, a status line):
 * for the log with the request id, never for the user.
 */
export class AiError extends Error {
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/**
 * A tool stopped because its turn did (cancelled, or the server stopping while the tool waited for
 * the user's approval): not an output to hand the model, but the turn's own end, which the
 * providers let through (`runTool` turns any other failure into an output).
 */
export class ToolInterrupted extends Error {}

/**
 * The model stopped at its output or context limit (`finish_reason: "length"`): the text so far
 * was relayed and is kept, but the answer is not whole (docs/chat.md, "Endings").
 */
export class AnswerCutError extends AiError {}

export const NO_PROVIDER_MESSAGE =
  'No AI server is connected to this server. Its admin adds one (the Admin page, or `parley connection add`; docs/connections.md), or sets PARLEY_AI_PROVIDER to openai-chat, openai-responses or anthropic with PARLEY_AI_BASE_URL, PARLEY_AI_API_KEY and PARLEY_AI_MODEL.';
