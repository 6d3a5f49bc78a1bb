import type { Config } from '../config';
import { AppError } from '../http/errors';
import { notConfigured, upstreamError, voiceClient } from './voice-upstream';

/** The formats of OpenAI's speech API, and the content type each is answered with. */
export const SPEECH_TYPES = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg; codecs=opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  // Raw samples without a header: 24 kHz, 16-bit signed little-endian, mono (OpenAI, Kokoro).
  pcm: 'audio/pcm',
} as const;

export type SpeechFormat = keyof typeof SPEECH_TYPES;

/**
 * Speech for `text` through `POST <PARLEY_TTS_BASE_URL>/audio/speech`, as a Response whose body
 * is the upstream's, passed on chunk by chunk as the client reads it: never held whole. A client
 * that leaves (its request's signal, or the body cancelled) aborts the upstream request.
 * Failures before the first byte are error envelopes; after it the status is sent, so the body
 * just ends short.
 */
export async function speakText(config: Config, opts: { text: string; voice?: string; format: SpeechFormat; signal: AbortSignal }): Promise<Response> {
  const client = voiceClient(config, 'tts');
  if (!client) throw notConfigured('tts');
  const abort = new AbortController();
  const signal = AbortSignal.any([opts.signal, abort.signal]);
  let upstream: Response;
  try {
    upstream = await client.audio.speech.create({ model: config.ttsModel, voice: opts.voice ?? config.ttsVoice, input: opts.text, response_format: opts.format }, { signal });
  } catch (err) {
    throw upstreamError('tts', err, opts.signal);
  }
  // Some servers answer an error with 200 and JSON or text: that is no audio to pass on.
  const type = upstream.headers.get('content-type') ?? '';
  if (!upstream.body || /^(application\/json|text\/)/i.test(type)) {
    abort.abort();
    throw new AppError('BAD_GATEWAY', { message: 'The text-to-speech server answered without audio.' });
  }
  const reader = upstream.body.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { value, done } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (err) {
          controller.error(err);
        }
      },
      cancel(reason) {
        abort.abort();
        return reader.cancel(reason).catch(() => undefined);
      },
    },
    // Nothing read ahead of the client: each chunk is asked of the upstream when the client wants one.
    { highWaterMark: 0 },
  );
  return new Response(body, { status: 200, headers: { 'content-type': SPEECH_TYPES[opts.format], 'cache-control': 'no-store' } });
}
