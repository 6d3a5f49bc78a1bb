import OpenAI from 'openai';
import type { Config } from '../config';
import { AppError, notSetUp } from '../http/errors';
import { fetchWithoutBunTimeout } from '../ai/upstream';
import { keyedFetch, refusedRedirectMessage, refusedRedirectOf } from '../net/keyed-fetch';

export type VoiceService = 'stt' | 'tts';

const LABEL: Record<VoiceService, string> = { stt: 'speech-to-text server', tts: 'text-to-speech server' };
const FEATURE: Record<VoiceService, string> = { stt: 'Speech to text', tts: 'Text to speech' };

/**
 * A transcription waits for the whole recording to be worked through: minutes for 25 MB on a
 * small board's CPU. Bun's fetch has its own 5-minute idle timer, turned off so this one decides.
 * A speech request waits only for its first bytes. A client that leaves aborts either at once.
 */
const TIMEOUT_MS: Record<VoiceService, number> = { stt: 10 * 60_000, tts: 2 * 60_000 };

// One client per configuration object (each app, each test's app, has its own).
const clients = new WeakMap<Config, Partial<Record<VoiceService, OpenAI>>>();

/** The configured server's client, or undefined when its base URL is not set. */
export function voiceClient(config: Config, service: VoiceService): OpenAI | undefined {
  const baseURL = service === 'stt' ? config.sttBaseUrl : config.ttsBaseUrl;
  if (!baseURL) return undefined;
  const own = clients.get(config) ?? {};
  clients.set(config, own);
  // No retries: a recording is megabytes to send again, and the caller may retry a speech request
  // itself (nothing of it has been sent yet when it fails).
  own[service] ??= new OpenAI({
    apiKey: (service === 'stt' ? config.sttApiKey : config.ttsApiKey) ?? 'none',
    baseURL,
    maxRetries: 0,
    timeout: TIMEOUT_MS[service],
    fetch: keyedFetch(fetchWithoutBunTimeout),
  });
  return own[service];
}

/** 503: the feature is off on this server; the message tells its admin what to set. */
export function notConfigured(service: VoiceService): AppError {
  const prefix = service === 'stt' ? 'PARLEY_STT' : 'PARLEY_TTS';
  return notSetUp(`${FEATURE[service]} is not set up on this server: its admin sets ${prefix}_BASE_URL (and ${prefix}_API_KEY, ${prefix}_MODEL as needed; see docs/voice.md), or adds a ${service} connection (docs/connections.md).`);
}

/**
 * An upstream failure as an answer safe to show: what went wrong and the upstream's status, never
 * its own text, its address or the key (the SDK's message, kept as the cause, is logged with the
 * request id for 5xx answers). A refusal of what the caller sent is the caller's 4xx; anything
 * else is the server's side: 502, or 503 with `Retry-After` when the upstream is busy.
 */
export function upstreamError(service: VoiceService, err: unknown, signal?: AbortSignal): AppError {
  if (err instanceof AppError) return err;
  if (signal?.aborted || err instanceof OpenAI.APIUserAbortError) return new AppError('CLIENT_CLOSED_REQUEST', { cause: err });
  const label = LABEL[service];
  const bad = (message: string) => new AppError('BAD_GATEWAY', { message, cause: err });
  if (refusedRedirectOf(err)) return bad(refusedRedirectMessage(`The ${label}`, `${service === 'stt' ? 'PARLEY_STT' : 'PARLEY_TTS'}_BASE_URL`));
  if (err instanceof OpenAI.APIConnectionTimeoutError) return bad(`The ${label} did not answer in time.`);
  if (err instanceof OpenAI.APIConnectionError) return bad(`The ${label} could not be reached.`);
  if (!(err instanceof OpenAI.APIError) || !err.status) return bad(`The ${label} failed.`);
  const status = err.status;
  if (status === 401 || status === 403) return bad(`The ${label} refused Parley's API key (HTTP ${status}).`);
  if (status === 404) return bad(`The ${label} does not know this model or address (HTTP 404).`);
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', { message: `The audio is larger than the ${label} accepts (HTTP 413).`, cause: err });
  if (status === 400 || status === 415 || status === 422)
    return new AppError('BAD_REQUEST', {
      message: service === 'stt' ? `The ${label} could not use this audio (HTTP ${status}).` : `The ${label} refused the request; check the voice and format (HTTP ${status}).`,
      cause: err,
    });
  if (status === 429) {
    const wait = Number(err.headers?.get('retry-after'));
    const seconds = Number.isFinite(wait) && wait >= 1 ? Math.min(Math.ceil(wait), 3600) : 10;
    return new AppError('SERVICE_UNAVAILABLE', { message: `The ${label} is busy or over its limit; try again later (HTTP 429).`, headers: { 'retry-after': String(seconds) }, cause: err });
  }
  if (status >= 500) return bad(`The ${label} failed with a server error (HTTP ${status}).`);
  return bad(`The ${label} refused the request (HTTP ${status}).`);
}
