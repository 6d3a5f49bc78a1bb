import { t } from 'elysia';
import { bodyLimitOf, defineOperation, SMALL_BODY_BYTES } from '../http/operation';
import { compileInput } from '../http/body';
import { forbidden, invalidInput, notFound } from '../http/errors';
import { collectAfterBody } from '../http/collect-soon';
import type { Config } from '../config';
import type { AppDeps } from '../deps';
import { canWriteConversation, findItemById } from '../chat/conversation.store';
import { ACCEPTED_AUDIO } from './audio-format';
import { receiveAudio } from './receive-audio';
import { transcribeAudio } from './transcribe';
import { SPEECH_TYPES, speakText, type SpeechFormat } from './speak';
import { speechTextOf } from './speech-text';
import { notConfigured } from './voice-upstream';
import { transcriptionTurn } from './transcription-turn';
import { serviceModelOf } from '../connections/adapters';
import { apiKeyOf, meterCall } from '../usage/meter-calls';

/** The text fields beside the `file` part. */
const TranscribeFields = t.Object({
  language: t.Optional(t.String({ pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})?$', description: 'The spoken language, ISO 639-1 (`en`, `fr`): faster and surer than letting the server guess.' })),
  prompt: t.Optional(t.String({ maxLength: 1000, description: 'Text the recording follows on from, or names and spellings to expect.' })),
});
const validateFields = compileInput<{ language?: string; prompt?: string }>(TranscribeFields);

/** The audio, and room for the multipart framing and the text fields. */
const transcribeBodyBytes = (config: Config) => config.sttMaxBytes + SMALL_BODY_BYTES;

/** A recording's bytes a second when its server reports no duration: 128 kbit/s, a common compressed rate. */
const ESTIMATED_AUDIO_BYTES_PER_S = 16_000;

const FORMATS = Object.keys(SPEECH_TYPES) as SpeechFormat[];

const SpeakInput = t.Object({
  text: t.Optional(t.String({ minLength: 1, maxLength: 10_000, pattern: '\\S', description: 'The text to read, as it is (at most PARLEY_TTS_MAX_CHARS characters).' })),
  itemId: t.Optional(t.String({ description: 'An assistant answer of a conversation the caller can read, read without its Markdown and code blocks.' })),
  voice: t.Optional(t.String({ minLength: 1, maxLength: 100, description: 'A voice the server has; default PARLEY_TTS_VOICE.' })),
  format: t.Optional(t.Union(FORMATS.map((f) => t.Literal(f)), { default: 'mp3' })),
});

/** Characters as a reader counts them: an emoji is one, not two UTF-16 units. */
const charCount = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** The words of an assistant answer the caller can read: unknown → 404, someone else's → 403. */
async function answerText(deps: AppDeps, userId: string, itemId: string): Promise<string> {
  const found = await deps.store.read(function* (tx) {
    const item = yield* findItemById(tx, itemId);
    return item && { item, readable: yield* canWriteConversation(tx, item.conversationId, userId) };
  });
  if (!found) throw notFound();
  if (!found.readable) throw forbidden();
  if (found.item.role !== 'assistant') throw invalidInput([{ path: ['itemId'], message: 'not an assistant answer' }]);
  const text = speechTextOf(found.item.content);
  if (!text) throw invalidInput([{ path: ['itemId'], message: 'the answer has no text to read' }]);
  return text;
}

export const voiceOperations = [
  defineOperation({
    path: 'audio/transcribe',
    summary: 'Transcribe a recording (speech to text)',
    description:
      `multipart/form-data: the recording in the part \`file\`, optional text fields \`language\` and \`prompt\`. Its type is read from its first bytes (${ACCEPTED_AUDIO}), whatever it is declared as; anything else: 400. ` +
      'Larger than PARLEY_STT_MAX_BYTES: 413, before the body is read when its length is declared. A browser post with the session cookie from another site: 403. No speech-to-text server set up: 503 naming the settings. The server failing or refusing: 502 (or 503 with Retry-After when it is busy), never its own words. docs/voice.md.',
    input: TranscribeFields,
    output: t.Object({
      text: t.String(),
      language: t.Optional(t.String({ description: 'As the server reports it (`english`, or `en`), when it does.' })),
      durationSeconds: t.Optional(t.Number({ description: 'The recording\'s length, when the server reports it.' })),
    }),
    upload: true,
    maxBodyBytes: transcribeBodyBytes,
    rateLimit: 'ai',
    errors: [413, 502, 503],
    handler: async ({ request, user, principal, deps }) => {
      const { config } = deps;
      // Before the upload is read: a server without transcription need not receive megabytes,
      // and one waiting for its turn holds none of them.
      const stt = await deps.connections.speech('stt');
      if (!stt) throw notConfigured('stt');
      const release = await transcriptionTurn(deps, request.signal);
      let size = 0;
      try {
        const upload = await receiveAudio(request, { maxFileBytes: Math.min(stt.sttMaxBytes, config.sttMaxBytes), maxBodyBytes: bodyLimitOf({ maxBodyBytes: transcribeBodyBytes }, config) });
        size = upload.audio.size;
        const fields = validateFields(upload.fields);
        // Metered in seconds (docs/usage.md): the server's duration, or the recording's size at
        // ESTIMATED_AUDIO_BYTES_PER_S when it reports none.
        const service = serviceModelOf(stt, 'stt');
        const guess = Math.ceil(size / ESTIMATED_AUDIO_BYTES_PER_S);
        return await meterCall(deps, { caller: { userId: user.id, apiKeyId: apiKeyOf(principal) }, kind: 'stt', estimate: { ...service, units: guess, estimated: true } }, async () => {
          const transcript = await transcribeAudio(stt, upload.audio, { ...fields, signal: request.signal });
          const seconds = transcript.durationSeconds;
          return { value: transcript, usage: seconds === undefined ? { ...service, units: guess, estimated: true } : { ...service, units: Math.ceil(seconds), estimated: false } };
        });
      } finally {
        release();
        collectAfterBody(size);
      }
    },
  }),
  defineOperation({
    path: 'audio/speak',
    summary: 'Read a text or an assistant answer aloud (text to speech), streamed',
    description:
      'Exactly one of `text` or `itemId` (else 400). `itemId`: an assistant answer in a conversation the caller owns or writes to (group members included); unknown: 404, someone else\'s: 403, not an answer: 400. ' +
      'Longer than PARLEY_TTS_MAX_CHARS: 400. The audio is streamed as the speech server produces it, with the format\'s content type (mp3 by default; pcm is raw 24 kHz 16-bit little-endian mono). ' +
      'No text-to-speech server set up: 503 naming the settings; the server failing: 502 before the first byte, a body cut short after it. docs/voice.md.',
    input: SpeakInput,
    output: t.String({ format: 'binary' }),
    kind: 'binary',
    mediaTypes: Object.values(SPEECH_TYPES),
    rateLimit: 'ai',
    errors: [403, 404, 502, 503],
    handler: async ({ input, user, principal, deps, request }) => {
      if ((input.text === undefined) === (input.itemId === undefined)) throw invalidInput([{ path: [], message: 'send either text or itemId' }]);
      const field = input.text !== undefined ? 'text' : 'itemId';
      const text = input.text ?? (await answerText(deps, user.id, input.itemId!));
      const tts = await deps.connections.speech('tts');
      if (!tts) throw notConfigured('tts');
      const max = tts.ttsMaxChars;
      const length = charCount(text);
      if (length > max) throw invalidInput([{ path: [field], message: `${length} characters, longer than the ${max} this server reads at once (PARLEY_TTS_MAX_CHARS)` }]);
      // Metered in characters (docs/usage.md), counted exactly here: speech servers report nothing.
      const spoken = { ...serviceModelOf(tts, 'tts'), units: length, estimated: false };
      return meterCall(deps, { caller: { userId: user.id, apiKeyId: apiKeyOf(principal) }, kind: 'tts', estimate: spoken }, async () => ({
        value: await speakText(tts, { text, voice: input.voice, format: input.format ?? 'mp3', signal: request.signal }),
        usage: spoken,
      }));
    },
  }),
];
