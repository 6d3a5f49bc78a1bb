import { Elysia } from 'elysia';
import type { AppDeps } from '../deps';
import type { Limits } from '../http/shared-limits';
import { IMAGE_BODY_BYTES, SMALL_BODY_BYTES } from '../http/operation';
import { v1Route } from './v1-route';
import { createV1Targets } from './v1-target';
import { listModels, retrieveModel } from './models';
import { chatCompletions } from './chat-completions';
import { cancelResponse, createResponse, retrieveResponse } from './responses';
import { createEmbeddings } from './embeddings';
import { apiEventLog } from './api-events';

/**
 * The OpenAI-compatible door (docs/openai-api.md): every `/v1` route on one screen. Not
 * operations rows (those answer in Parley's envelope): OpenAI's paths, shapes and errors,
 * authenticated with Parley API keys.
 */
export const V1_PATHS: Record<string, string> = {
  '/v1/models': 'GET, HEAD',
  '/v1/chat/completions': 'POST',
  '/v1/responses': 'POST',
  '/v1/embeddings': 'POST',
};
/** The paths with a parameter, for the 405 of another method (src/app.ts). */
export const V1_PATTERNS: [RegExp, string][] = [
  [/^\/v1\/models\/.+$/, 'GET, HEAD'],
  [/^\/v1\/responses\/[^/]+$/, 'GET, HEAD'],
  [/^\/v1\/responses\/[^/]+\/cancel$/, 'POST'],
];

export function v1Routes(deps: AppDeps, limits: Limits) {
  const resolve = createV1Targets(deps);
  const log = apiEventLog(deps);
  const route = (name: string, opts: Parameters<typeof v1Route>[3], handler: Parameters<typeof v1Route>[4]) => v1Route(deps, limits, name, opts, handler);
  // A turn's images are data URLs: room for one of the largest images, as chat/stream has.
  const chatBody = { bodyBytes: IMAGE_BODY_BYTES, rateLimited: true };
  return new Elysia({ name: 'v1' })
    .get('/v1/models', route('models', {}, listModels))
    .get('/v1/models/*', route('models', {}, retrieveModel))
    .post('/v1/chat/completions', route('chat/completions', chatBody, chatCompletions(resolve)), { parse: 'none' })
    .post('/v1/responses', route('responses', chatBody, createResponse(resolve, log)), { parse: 'none' })
    .get('/v1/responses/:id', route('responses/retrieve', {}, retrieveResponse(log)))
    .post('/v1/responses/:id/cancel', route('responses/cancel', {}, cancelResponse(log)), { parse: 'none' })
    .post('/v1/embeddings', route('embeddings', { bodyBytes: () => 16 * SMALL_BODY_BYTES, rateLimited: true }, createEmbeddings), { parse: 'none' });
}
