import type { AiEventImage, AiTool } from '../ai/ai.types';
import type { Config } from '../config';
import type { AppDeps } from '../deps';
import type { FileRow } from '../db/schema';
import { AppError } from '../http/errors';
import { sniffFormat } from '../images/image-header';
import { addFile, writeTemp } from './add-file';
import { readableFile } from './file.routes';
import { findBlob } from './file.store';
import { contentUrl } from './file.view';
import { findGeneratedFile } from './generated-image.store';
import { ImagesError, requestImage, type ImageRequest } from './images-client';
import type { ToolSource } from '../tools/tool.types';
import { serviceModelOf } from '../connections/adapters';
import { meterCall } from '../usage/meter-calls';
import { QuotaError } from '../usage/usage.types';
import type { CallUsage } from '../ai/ai.types';

/** Longest prompt taken (dall-e-3's limit; the GPT image models take more). */
export const IMAGE_PROMPT_MAX_CHARS = 4000;

/** The sizes the stream's `image_generation.in_progress` may name (interface.md); others are left out of it. */
const EVENT_SIZES = ['1024x1024', '1024x1536', '1536x1024'] as const;

/** What the images APIs take to edit (OpenAI: PNG, JPEG, WebP), with the extension to send it under. */
const EDITABLE: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

/** Extensions a made image's name may end in: what `addFile` keeps an image as. */
const KEPT_AS = ['png', 'jpg', 'webp', 'gif'];

type Made = { file: FileRow } | { error: string };

/** The image tools, to the registry (src/tools/): offered with an enabled images connection. */
export const imageToolSource: ToolSource = {
  id: 'images',
  label: 'Images',
  priority: 60,
  async status(deps) {
    return (await deps.connections.images())?.imagesBaseUrl ? {} : { unavailable: 'No images connection is enabled: add one of kind images under Connections (docs/files.md).' };
  },
  async tools(turn) {
    return imageTools(turn.deps, { userId: turn.user.id, responseId: turn.responseId, images: await turn.deps.connections.images(), apiKeyId: turn.apiKeyId });
  },
};

/**
 * The function tools that make images (docs/files.md, "Image generation and editing"), offered
 * only when an images connection is enabled (`PARLEY_IMAGES_BASE_URL` seeds one). An image made is the user's file (`source`
 * `generated`), kept like an upload (sniffed, re-encoded, within their quota), and named after
 * the call that made it, so a restart that runs the call again finds it rather than pays for a
 * second. A failure is the call's output to the model and an `.error` event, never the turn's end.
 */
export function imageTools(deps: AppDeps, ctx: { userId: string; responseId: string; images?: Config; apiKeyId?: string }): AiTool[] {
  const images = ctx.images;
  if (!images?.imagesBaseUrl) return [];
  const model = images.imagesModel;
  const size = EVENT_SIZES.find((s) => s === images.imagesSize);
  const nameOf = (callKey: string) => `image-${new Bun.CryptoHasher('sha256').update(`${ctx.responseId}:${callKey}`).digest('hex').slice(0, 16)}`;
  const make = (callId: string, callKey: string, req: ImageRequest) =>
    makeImage(deps, images, { userId: ctx.userId, responseId: ctx.responseId, callId, apiKeyId: ctx.apiKeyId }, nameOf(callKey), req);
  return [
    {
      name: 'generate_image',
      description: "Create an image from a description. It is shown to the user and kept in their files; the output gives its file id (for edit_image).",
      parameters: {
        type: 'object',
        properties: { prompt: { type: 'string', description: `What the image shows: subject, style, composition, any text in it (at most ${IMAGE_PROMPT_MAX_CHARS} characters)` } },
        required: ['prompt'],
      },
      async run(args, emit, callId, callKey) {
        const prompt = promptOf(args);
        if ('refusal' in prompt) return prompt.refusal;
        emit({ type: 'image_generation.in_progress', itemId: callId, outputFormat: 'png', ...(size ? { size } : {}), prompt: prompt.text });
        const made = await make(callId, callKey, { prompt: prompt.text });
        if ('error' in made) {
          emit({ type: 'image_generation.error', itemId: callId, error: made.error });
          return `No image was made. ${made.error}`;
        }
        emit({ type: 'image_generation.completed', itemId: callId, images: [imageOf(made.file)], model });
        return `The image is made and shown to the user: file ${made.file.id} (${describe(made.file)}). To change it, call edit_image with this fileId.`;
      },
    },
    {
      name: 'edit_image',
      description: "Change one of the user's images (uploaded or generated, by its file id) as instructed. The result is a new image, shown to the user and kept in their files; the original stays as it was.",
      parameters: {
        type: 'object',
        properties: {
          fileId: { type: 'string', description: 'The id of the image file to edit' },
          prompt: { type: 'string', description: `What to change, and what the result should look like (at most ${IMAGE_PROMPT_MAX_CHARS} characters)` },
        },
        required: ['fileId', 'prompt'],
      },
      async run(args, emit, callId, callKey) {
        const prompt = promptOf(args);
        if ('refusal' in prompt) return prompt.refusal;
        const fileId = typeof args.fileId === 'string' ? args.fileId.trim() : '';
        if (!fileId) return 'Nothing was edited: give the fileId of the image to edit.';
        emit({ type: 'edit_image.in_progress', itemId: callId, prompt: prompt.text, fileId });
        const source = await editableImage(deps, ctx.userId, fileId);
        const made = 'error' in source ? source : await make(callId, callKey, { prompt: prompt.text, image: source.image });
        if ('error' in made) {
          emit({ type: 'edit_image.error', itemId: callId, error: made.error });
          return `The image was not edited. ${made.error}`;
        }
        emit({ type: 'edit_image.completed', itemId: callId, images: [imageOf(made.file)], model });
        return `The edited image is shown to the user: a new file ${made.file.id} (${describe(made.file)}); ${fileId} is unchanged.`;
      },
    },
  ];
}

/** How a made image is shown in the stream: where Parley serves it (with the caller's credential) and which file it is. */
function imageOf(f: FileRow): AiEventImage {
  return { type: 'url', data: contentUrl(f.id), fileId: f.id, mimeType: f.mimeType, ...(f.width !== null && f.height !== null ? { width: f.width, height: f.height } : {}) };
}

const describe = (f: FileRow) => `${f.width ?? '?'}×${f.height ?? '?'} ${f.mimeType}`;

function promptOf(args: Record<string, unknown>): { text: string } | { refusal: string } {
  const text = typeof args.prompt === 'string' ? args.prompt.trim() : '';
  if (!text) return { refusal: 'Nothing was made: the prompt is empty. Describe the image.' };
  if (text.length > IMAGE_PROMPT_MAX_CHARS) return { refusal: `Nothing was made: a prompt is at most ${IMAGE_PROMPT_MAX_CHARS} characters and this one has ${text.length}. Say it shorter.` };
  return { text };
}

/** The image to edit, as the images API takes it, if the user may read it. */
async function editableImage(deps: AppDeps, userId: string, fileId: string): Promise<{ image: File } | { error: string }> {
  const file = await readableFile(deps, fileId, userId).catch(() => undefined);
  // Unknown and not the user's read alike (docs/files.md, "Access").
  if (!file) return { error: `No image with the id "${fileId}" is available to you.` };
  if (file.kind !== 'image') return { error: `File ${fileId} is a document, not an image.` };
  const ext = EDITABLE[file.mimeType];
  if (!ext) return { error: `Only PNG, JPEG and WebP images can be edited; file ${fileId} is ${file.mimeType}.` };
  const blob = await deps.store.read((tx) => findBlob(tx, file.sha256));
  if (!blob) return { error: `No image with the id "${fileId}" is available to you.` };
  return { image: new File([await deps.files.get(blob.key).bytes()], `image.${ext}`, { type: file.mimeType }) };
}

/**
 * The image asked for, kept as the user's file named `<name>.<ext>`: the one an earlier run of
 * the same call kept, or a new one from the images server.
 */
async function makeImage(
  deps: AppDeps,
  images: Config,
  where: { userId: string; responseId: string; callId: string; apiKeyId?: string },
  name: string,
  req: ImageRequest,
): Promise<Made> {
  const earlier = await findKeptImage(deps, where.userId, name);
  if (earlier) return { file: earlier };
  const fail = (error: string, detail?: string): Made => {
    deps.log.warn('image tool failed', { responseId: where.responseId, itemId: where.callId, error, ...(detail ? { upstream: detail } : {}) });
    return { error };
  };
  let bytes: Uint8Array;
  // Metered (docs/usage.md): over the images allowance with no credits to pay, no request goes out.
  const service = serviceModelOf(images, 'images');
  const caller = { userId: where.userId, responseId: where.responseId, apiKeyId: where.apiKeyId };
  try {
    bytes = await meterCall(deps, { caller, kind: 'images', estimate: { ...service, units: 1, estimated: true } }, async () => {
      let reported: CallUsage | undefined;
      const value = await requestImage(images, { ...req, onUsage: (u) => (reported = u) });
      // One image made is counted exactly; its tokens only when the server reports them.
      return { value, usage: { ...service, units: 1, ...(reported ?? {}), estimated: false } };
    });
  } catch (err) {
    if (err instanceof QuotaError) return fail(err.message);
    if (err instanceof ImagesError) return fail(err.message, err.detail);
    deps.log.error('image tool failed', { responseId: where.responseId, itemId: where.callId, cause: err instanceof Error ? err.stack : String(err) });
    return { error: 'The image server failed.' };
  }
  const kept = await keepImage(deps, where.userId, name, bytes, 'The image server answered something that is not an image.');
  if ('error' in kept) return fail(kept.error, kept.detail);
  return kept;
}

/**
 * Image bytes a tool received, kept as the user's file `<name>.<ext>` (`source` `generated`):
 * sniffed, re-encoded and counted in their quota like an upload. `{error}` says why not, in words
 * the user may read (`detail` for the log).
 */
export async function keepImage(deps: AppDeps, userId: string, name: string, bytes: Uint8Array, notImage: string): Promise<{ file: FileRow } | { error: string; detail?: string }> {
  if (bytes.length > deps.config.filesMaxBytes) return { error: `The image is larger than one file may be (${deps.config.filesMaxBytes} bytes, PARLEY_FILES_MAX_BYTES).` };
  const format = sniffFormat(bytes.subarray(0, 64));
  if (!format) return { error: notImage };
  const ext = format === 'jpeg' ? 'jpg' : KEPT_AS.includes(format) ? format : 'png';
  try {
    const temp = await writeTemp(deps, bytes);
    return { file: await addFile(deps, userId, { tempPath: temp.path, size: temp.size, sha256: temp.sha256, filename: `${name}.${ext}`, head: bytes.subarray(0, 4096) }, 'generated') };
  } catch (err) {
    // Parley's own words (the image refused, the quota full): safe to show.
    if (err instanceof AppError) return { error: `The image could not be kept: ${err.message}` };
    return { error: 'The image could not be kept.', detail: err instanceof Error ? err.stack : String(err) };
  }
}

/** The file an earlier run of the same call kept as `<name>.<ext>`, if any. */
export const findKeptImage = (deps: AppDeps, userId: string, name: string) =>
  deps.store.read((tx) => findGeneratedFile(tx, userId, KEPT_AS.map((ext) => `${name}.${ext}`)));
