import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import type { AppDeps } from '../deps';
import { VERSION } from '../version';

const Capabilities = t.Object({
  version: t.String({ description: "The running server's version (`parley --version`)." }),
  voice: t.Object({
    transcribe: t.Boolean({ description: 'audio/transcribe works: a speech-to-text server is set up (PARLEY_STT_BASE_URL).' }),
    speak: t.Boolean({ description: 'audio/speak works: a text-to-speech server is set up (PARLEY_TTS_BASE_URL).' }),
    maxRecordingBytes: t.Integer({ description: 'The largest recording audio/transcribe takes (PARLEY_STT_MAX_BYTES).' }),
  }),
  files: t.Object({
    maxBytes: t.Integer({ description: 'The largest file one upload may be (PARLEY_FILES_MAX_BYTES).' }),
    maxFiles: t.Integer({ description: 'How many files one user may keep (PARLEY_FILES_MAX_PER_USER).' }),
    quotaBytes: t.Integer({ description: "How many bytes one user's files may take together (PARLEY_FILES_QUOTA_BYTES)." }),
    semanticSearch: t.Boolean({ description: 'Documents are searched by meaning too: an embeddings server is set up (PARLEY_EMBEDDINGS_BASE_URL).' }),
  }),
  imageGeneration: t.Boolean({ description: 'The assistant can make and edit images: an images server is set up (PARLEY_IMAGES_BASE_URL).' }),
  webSearch: t.Boolean({ description: 'Research (and chat, on openai-chat) can search the web: a search provider is set up.' }),
  memory: t.Object({ maxPerUser: t.Integer({ description: 'How many memories one user may keep (PARLEY_MEMORY_MAX_PER_USER).' }) }),
});

/** What this server offers beyond chat, from its enabled connections: what a client shows (a microphone, a search by meaning) follows it. */
async function capabilitiesOf(deps: AppDeps) {
  const c = deps.config;
  const cx = deps.connections;
  const [stt, tts, embeddings, images, search, rows] = await Promise.all([cx.speech('stt'), cx.speech('tts'), cx.embeddings(), cx.images(), cx.search(), cx.rows()]);
  return {
    version: VERSION,
    voice: { transcribe: !!stt, speak: !!tts, maxRecordingBytes: stt ? Math.min(stt.sttMaxBytes, c.sttMaxBytes) : c.sttMaxBytes },
    files: { maxBytes: c.filesMaxBytes, maxFiles: c.filesMaxPerUser, quotaBytes: c.filesQuotaBytes, semanticSearch: !!embeddings },
    imageGeneration: !!images,
    // A search connection, or a Responses connection (OpenAI searches itself in research).
    webSearch: !!search || rows.some((r) => r.enabled && r.api === 'openai-responses'),
    memory: { maxPerUser: c.memoryMaxPerUser },
  };
}

export const serverInfoOperations = [
  defineOperation({
    path: 'server/getCapabilities',
    summary: 'What this server can do beyond chat (voice, files, image generation, web search)',
    description:
      'Read from the server\'s enabled connections (docs/connections.md): a client hides what is not set up (a microphone without a speech-to-text server) instead of offering it and failing. The same for every user; no secret, address or model name is given.',
    input: t.Object({}),
    output: Capabilities,
    handler: async ({ deps }) => capabilitiesOf(deps),
  }),
];
