import { IdleLimit } from '../ai/upstream';
import { estimateTokens } from '../ai/count-tokens';
import { OpenAiError, openAiInvalid, openAiModelNotFound } from '../http/errors';
import { embeddingsModel } from './models';
import { joinUrl, postUpstream } from './upstream-call';
import { startMeter } from './v1-usage';
import type { V1Context } from './v1-route';

/** OpenAI's own bound on the inputs of one embeddings request. */
const MAX_INPUTS = 2048;

/**
 * `POST /v1/embeddings` through the server's embeddings connection (the one semantic search
 * uses, docs/connections.md): the caller's request passed on with the connection's model, its
 * answer returned as the server gave it (vectors as floats or base64, as asked), the model named
 * with its catalogue id. Metered as `embeddings` with the server's reported tokens.
 */
export async function createEmbeddings(ctx: V1Context): Promise<object> {
  const { deps } = ctx;
  const body = ctx.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw openAiInvalid('The request body must be a JSON object.');
  const input = body.input;
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input : undefined;
  if (!texts?.length || texts.length > MAX_INPUTS || texts.some((t) => typeof t !== 'string' && typeof t !== 'number' && !Array.isArray(t)))
    throw openAiInvalid(`input must be a string or an array of 1 to ${MAX_INPUTS} strings (or token arrays).`, 'input');
  if (typeof body.model !== 'string' || !body.model) throw openAiInvalid('You must provide a model parameter (GET /v1/models lists it).', 'model');
  const model = await embeddingsModel(deps);
  const settings = model && (await deps.connections.embeddings());
  if (!model || !settings?.embeddingsBaseUrl) throw openAiModelNotFound('This server has no embeddings connection: its admin adds one (docs/connections.md).');
  if (body.model !== model.id && body.model !== model.model) throw openAiModelNotFound(`The model "${body.model}" does not exist here: this server's embeddings model is "${model.id}".`);
  const inputTokens = texts.reduce<number>((n, t) => n + (typeof t === 'string' ? estimateTokens(t) : Array.isArray(t) ? t.length : 1), 0);
  const base = { connectionId: model.row.id, model: model.id };
  const meter = await startMeter(deps, ctx.caller, 'embeddings', { ...base, inputTokens, estimated: true });
  const idle = new IdleLimit(settings.embeddingsTimeoutS * 1000, ctx.request.signal);
  let answer: Record<string, any>;
  try {
    const res = await postUpstream(
      joinUrl(settings.embeddingsBaseUrl, '/embeddings'),
      settings.embeddingsApiKey ? { authorization: `Bearer ${settings.embeddingsApiKey}` } : {},
      { ...body, model: settings.embeddingsModel },
      idle,
      ctx.request.signal,
    );
    answer = (await res.json()) as Record<string, any>;
  } catch (err) {
    await meter.release();
    if (err instanceof OpenAiError || ctx.request.signal.aborted) throw err;
    throw new OpenAiError(502, 'The embeddings server answered something Parley cannot read.', 'server_error');
  } finally {
    idle.stop();
  }
  const reported = answer.usage?.prompt_tokens;
  await meter.settle({ ...base, ...(typeof reported === 'number' ? { inputTokens: reported, estimated: false } : { inputTokens, estimated: true }) });
  return { ...answer, model: model.id };
}
