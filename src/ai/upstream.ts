import OpenAI from 'openai';
import { AiError, type AiEvent, type AiTool } from './ai.types';

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
    return `The tool failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Map upstream failures to messages safe to show (never the key, never a stack). */
export function describeUpstream(err: unknown, signal?: AbortSignal): Error {
  if (err instanceof AiError) return err;
  if (err instanceof OpenAI.APIUserAbortError || signal?.aborted) return new AiError('The response was cancelled.');
  if (err instanceof OpenAI.APIConnectionError) return new AiError('The AI provider could not be reached.');
  if (err instanceof OpenAI.APIError) return new AiError(`The AI provider answered with an error${err.status ? ` (HTTP ${err.status})` : ''}: ${err.message}`);
  return new AiError(`The AI provider failed: ${err instanceof Error ? err.message : String(err)}`);
}
