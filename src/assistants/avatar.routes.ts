import { Elysia, t } from 'elysia';
import type { AppDeps } from '../deps';
import { authenticate } from '../auth/authenticate';
import { IMAGE_BODY_BYTES, defineOperation } from '../http/operation';
import { invalidInput, notFound, unauthorized } from '../http/errors';
import { pageRoute } from '../http/register';
import { AssistantSchema, editableAssistant, usableAssistant, viewOf } from './assistants.routes';
import { deleteAvatar, findAvatar, saveAvatar } from './avatar.store';
import { makeAvatar } from './avatar-image';

// Assistants' avatars (docs/assistants.md, "Avatar"): set and removed by whoever may change the
// assistant, served to whoever may use it.

/** The GET route of avatars, for the 405 of another method (src/app.ts). */
export const AVATAR_PATH = /^\/api\/assistants\/[^/]+\/avatar$/;

const AssistantId = t.String({ minLength: 1, maxLength: 100 });

export const assistantAvatarOperations = [
  defineOperation({
    path: 'assistants/setAvatar',
    summary: "Give an assistant its avatar",
    description:
      'An image as a data URL (PNG, JPEG, WebP, AVIF, GIF, BMP, TIFF, ICO, PNM or QOI), made a 128-pixel square WebP (cropped to its middle). ' +
      'Refused as image uploads are (PARLEY_IMAGE_MAX_BYTES, and PARLEY_IMAGE_MAX_PIXELS from the header before decoding): 400 naming `dataUrl`. ' +
      'The assistant\'s `avatarUrl` then serves it. The same refusals as assistants/update.',
    input: t.Object({ assistantId: AssistantId, dataUrl: t.String({ minLength: 1 }) }),
    output: t.Object({ assistant: AssistantSchema }),
    errors: [403, 404],
    rateLimit: 'write',
    // Decoding holds memory: uploads wait their turn with the image conversions.
    turns: (deps) => deps.imageConversions,
    maxBodyBytes: IMAGE_BODY_BYTES,
    handler: async ({ input, user, deps }) => {
      const a = await editableAssistant(deps, user, input.assistantId);
      const made = await makeAvatar(input.dataUrl, { maxBytes: deps.config.imageMaxBytes, maxPixels: deps.config.imageMaxPixels });
      if ('error' in made) throw invalidInput([{ path: ['dataUrl'], message: made.error }]);
      const version = new Bun.CryptoHasher('sha256').update(made.webp).digest('hex').slice(0, 16);
      const updated = await deps.store.write((tx) => saveAvatar(tx, a.id, made.webp.toBase64(), version, deps.now()));
      return { assistant: await viewOf(deps, updated, user) };
    },
  }),
  defineOperation({
    path: 'assistants/removeAvatar',
    summary: "Remove an assistant's avatar",
    description: 'Its `avatarUrl` becomes null. The same refusals as assistants/update.',
    input: t.Object({ assistantId: AssistantId }),
    output: t.Object({ assistant: AssistantSchema }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const a = await editableAssistant(deps, user, input.assistantId);
      const updated = await deps.store.write((tx) => deleteAvatar(tx, a.id, deps.now()));
      return { assistant: await viewOf(deps, updated, user) };
    },
  }),
];

/**
 * The avatar's bytes: GET, so that an `<img>` of the web app (with its session cookie) and any
 * client (with its key or token) can show it; for whoever may use the assistant, else 404.
 */
export function assistantAvatarRoutes(deps: AppDeps) {
  type Ctx = { request: Request; params: { id: string } };
  return new Elysia({ name: 'assistant-avatar' }).get(
    '/api/assistants/:id/avatar',
    pageRoute<Ctx>(deps, async ({ request, params }) => {
      const auth = await authenticate(deps.store, request.headers, deps.config.sessionTtlDays, deps.now());
      if (!auth) throw unauthorized();
      const a = await usableAssistant(deps, auth.principal.user, params.id);
      const webp = a?.avatarVersion ? await deps.store.read((tx) => findAvatar(tx, a.id)) : undefined;
      if (!a || !webp) throw notFound();
      const headers = {
        'content-type': 'image/webp',
        etag: `"${a.avatarVersion}"`,
        // Private: behind a credential. Revalidated: who may use a shared assistant can change.
        'cache-control': 'private, no-cache',
        'content-security-policy': "default-src 'none'; sandbox",
      };
      if (request.headers.get('if-none-match') === headers.etag) return new Response(null, { status: 304, headers });
      return new Response(Uint8Array.fromBase64(webp), { headers });
    }),
  );
}

export const assistantAvatarOpenApiPaths = {
  '/api/assistants/{id}/avatar': {
    get: {
      operationId: 'assistants.avatar',
      tags: ['assistants'],
      summary: "An assistant's avatar (WebP, 128 pixels square)",
      description: 'With the caller\'s credential (API key, bearer token or the session cookie); for whoever may use the assistant. The address is its `avatarUrl`, which changes with the image.',
      security: [{ session: [] }, { bearer: [] }, { apiKey: [] }],
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
      ],
      responses: {
        200: { description: 'The image', content: { 'image/webp': {} } },
        304: { description: 'Not modified (the ETag matched)' },
        401: { description: 'No valid credential', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
        404: { description: 'Unknown, not for the caller, or no avatar', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
      },
    },
  },
};
