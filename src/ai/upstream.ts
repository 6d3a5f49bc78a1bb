import OpenAI from 'openai';
import { AiError, ToolInterrupted, type AiEvent, type AiTool } from './ai.types';
import { refusedRedirectMessage, refusedRedirectOf } from '../net/keyed-fetch';

/** Helpers both OpenAI providers share: running a function tool the model called, and safe error messages. */

export async function runTool(
  tools: AiTool[],
  call: { callId: string; name: string; arguments: string },
  emit: (e: AiEvent) => void,
  callKey: string,
): Promise<string> {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return `Unknown tool ${call.name}.`;
  let args: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(call.arguments || '{}');
    if (parsed && typeof parsed === 'object') args = parsed;
  } catch {
    // Small models send broken JSON; the tool gets what can be salvaged (nothing) rather than failing the turn.
  }
  try {
    return await tool.run(args, emit, call.callId, callKey);
  } catch (err) {
    if (err instanceof ToolInterrupted) throw err;
    return `The tool failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

export const CANCELLED = 'The response was cancelled.';

/**
 * Map upstream failures to short messages safe to show: never the key, never a stack, never the
 * upstream's own text (a chat template's Jinja traceback, the SDK's "400 …" that repeats the
 * status). That text goes in `detail`, for the log with the request id.
 */
export function describeUpstream(err: unknown, signal?: AbortSignal): AiError {
  if (err instanceof AiError) return err;
  if (err instanceof OpenAI.APIUserAbortError || signal?.aborted) return new AiError(CANCELLED);
  const detail = err instanceof Error ? err.message : String(err);
  const redirect = refusedRedirectOf(err);
  if (redirect) return new AiError(refusedRedirectMessage('The AI provider', 'PARLEY_AI_BASE_URL'), redirect.message);
  if (err instanceof OpenAI.APIConnectionError) return new AiError('The AI provider could not be reached.', detail);
  if (err instanceof OpenAI.APIError && err.status) return new AiError(`${refusalOf(err.status, detail)} (HTTP ${err.status}).`, detail);
  return new AiError('The AI provider failed.', detail);
}

/** What an upstream's HTTP status means, said to the user (any provider's). */
export function refusalOf(status: number, detail: string): string {
  if (status === 401 || status === 403) return 'The AI provider refused Parley’s API key';
  if (status === 404) return 'The AI provider does not know this model or address';
  if (status === 429) return 'The AI provider is busy or over its limit; try again later';
  // llama.cpp ("exceeds the available context size"), vLLM, Ollama and OpenAI all say "context".
  if (/context|too (long|many tokens)/i.test(detail)) return 'The conversation is too long for the model’s context';
  if (status >= 500) return 'The AI provider failed with a server error';
  return 'The AI provider refused the request';
}

const IDLE = 'parley-ai-idle';

/**
 * Parley's own limit on a quiet upstream (`PARLEY_AI_IDLE_TIMEOUT_S`): the request is aborted when
 * nothing arrived for `ms` (waiting for the first token counts: a big prompt on a Pi takes a
 * minute before it). Bun's fetch has its own 5-minute idle timer, which the providers turn off
 * (`fetchWithoutBunTimeout`) so that this one, documented and with its own message, decides.
 */
export class IdleLimit {
  private readonly ac = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  readonly signal: AbortSignal;

  constructor(
    private readonly ms: number,
    outer?: AbortSignal,
    /** How the provider's own errors read (OpenAI's by default). */
    private readonly describeOther: (err: unknown, signal?: AbortSignal) => AiError = describeUpstream,
  ) {
    this.signal = outer ? AbortSignal.any([outer, this.ac.signal]) : this.ac.signal;
    this.timer = setTimeout(() => this.ac.abort(IDLE), ms);
  }

  /** Something arrived: the quiet spell starts again. */
  touch(): void {
    this.timer.refresh();
  }

  get fired(): boolean {
    return this.ac.signal.aborted;
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /** The error to throw: the idle limit's when it fired, else what `err` was. */
  describe(err: unknown, outer?: AbortSignal): AiError {
    if (this.fired && !outer?.aborted)
      return new AiError(`The AI provider sent nothing for ${Math.round(this.ms / 1000)} seconds, so Parley stopped waiting (PARLEY_AI_IDLE_TIMEOUT_S).`);
    return this.describeOther(err, outer);
  }
}

/** Bun's fetch, without its built-in 5-minute idle timer (`timeout: false` is Bun's own option). */
export const fetchWithoutBunTimeout = ((url: string | URL | Request, init?: RequestInit) =>
  fetch(url, { ...init, timeout: false } as RequestInit)) as typeof fetch;
