import OpenAI from 'openai';
import type { Config } from '../config';
import { AppError } from '../http/errors';
import { notConfigured, upstreamError, voiceClient } from './voice-upstream';

export interface Transcript {
  text: string;
  language?: string;
  durationSeconds?: number;
}

/**
 * Servers known to refuse `verbose_json` (OpenAI's gpt-4o transcription models take `json` and
 * `text` only), per configuration: asked once, then plain `json` from there on.
 */
const plainOnly = new WeakSet<Config>();

/**
 * One recording through `POST <PARLEY_STT_BASE_URL>/audio/transcriptions`. `verbose_json` is
 * asked for first, for the language and duration that whisper-style servers report with it; a
 * server that refuses that format is asked again with `json` (text only) and remembered.
 */
export async function transcribeAudio(config: Config, audio: File, opts: { language?: string; prompt?: string; signal?: AbortSignal }): Promise<Transcript> {
  const client = voiceClient(config, 'stt');
  if (!client) throw notConfigured('stt');
  const ask = (format: 'verbose_json' | 'json') =>
    client.audio.transcriptions.create(
      { file: audio, model: config.sttModel, response_format: format, ...(opts.language ? { language: opts.language } : {}), ...(opts.prompt ? { prompt: opts.prompt } : {}) },
      { signal: opts.signal },
    ) as Promise<unknown>;
  let answer: unknown;
  try {
    if (plainOnly.has(config)) answer = await ask('json');
    else
      try {
        answer = await ask('verbose_json');
      } catch (err) {
        if (!refusesVerbose(err)) throw err;
        plainOnly.add(config);
        answer = await ask('json');
      }
  } catch (err) {
    throw upstreamError('stt', err, opts.signal);
  }
  return transcriptOf(answer);
}

function refusesVerbose(err: unknown): boolean {
  return err instanceof OpenAI.APIError && err.status === 400 && /response_format|verbose_json/i.test(err.message);
}

/** The parts of the answer Parley passes on, checked: a server may answer anything. */
function transcriptOf(answer: unknown): Transcript {
  const a = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>;
  if (typeof a.text !== 'string') throw new AppError('BAD_GATEWAY', { message: 'The speech-to-text server answered without a transcript.' });
  const out: Transcript = { text: a.text.trim() };
  if (typeof a.language === 'string' && a.language) out.language = a.language;
  const duration = typeof a.duration === 'string' ? Number(a.duration) : a.duration;
  if (typeof duration === 'number' && Number.isFinite(duration) && duration >= 0) out.durationSeconds = duration;
  return out;
}
