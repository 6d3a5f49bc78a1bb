import type { Config } from '../config';
import type { Check } from '../ops/checks';

const TIMEOUT_MS = 4000;

/**
 * `parley doctor`'s line for the speech-to-text or text-to-speech server: reachable, and not
 * refusing the key. It asks `GET <base>/models`, which OpenAI, Speaches, LocalAI and
 * Kokoro-FastAPI answer; whisper.cpp's server has no such path, and its 404 still says it is up.
 * Whether the model and voice exist only a real request tells: doctor sends no audio.
 */
export async function probeVoice(config: Config, service: 'stt' | 'tts'): Promise<Check> {
  const [name, prefix] = service === 'stt' ? ['speech to text', 'PARLEY_STT'] : ['text to speech', 'PARLEY_TTS'];
  const baseUrl = service === 'stt' ? config.sttBaseUrl : config.ttsBaseUrl;
  const apiKey = service === 'stt' ? config.sttApiKey : config.ttsApiKey;
  if (!baseUrl) return { name, status: 'skip', detail: `${prefix}_BASE_URL is empty (${service === 'stt' ? 'audio/transcribe' : 'audio/speak'} answers 503)` };
  const url = `${baseUrl}/models`;
  let res: Response;
  try {
    res = await fetch(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'manual' });
    await res.body?.cancel();
  } catch (err) {
    return { name, status: 'fail', detail: `${url}: ${(err as Error).message}`, fix: `start the server, or fix ${prefix}_BASE_URL (it usually ends in /v1)` };
  }
  if (res.status === 401 || res.status === 403) return { name, status: 'fail', detail: `${url} refused the key (HTTP ${res.status})`, fix: `set a valid ${prefix}_API_KEY` };
  return { name, status: 'ok', detail: `${baseUrl} reachable (GET /models: HTTP ${res.status})` };
}
