import type { AppDeps } from '../deps';
import { AppError } from '../http/errors';
import { TurnAbandoned } from '../http/turnstile';

/**
 * The longest a transcription waits for its turn. It waits with its upload unread (a waiting
 * request holds no audio: Bun reads no further into a body nobody reads), and the server ends a
 * connection that has been silent for 60 s (`idleTimeout`, src/server.ts): past this the client
 * is told to come back rather than cut off.
 */
const TURN_WAIT_MS = 45_000;
const RETRY_AFTER_S = 10;

/**
 * A turn among the transcriptions that run at once (`PARLEY_STT_CONCURRENCY`, docs/voice.md),
 * resolving with its release: each running one holds its recording in memory until the
 * speech-to-text server answers, which takes minutes for a long one on a small board.
 */
export async function transcriptionTurn(deps: Pick<AppDeps, 'transcriptions'>, signal: AbortSignal, waitMs = TURN_WAIT_MS): Promise<() => void> {
  try {
    return await deps.transcriptions.acquire(AbortSignal.any([signal, AbortSignal.timeout(waitMs)]));
  } catch (err) {
    if (!(err instanceof TurnAbandoned)) throw err;
    if (signal.aborted) throw new AppError('CLIENT_CLOSED_REQUEST', { cause: err });
    throw new AppError('SERVICE_UNAVAILABLE', {
      message: `The server is transcribing as many recordings as it takes at once (PARLEY_STT_CONCURRENCY); try again in ${RETRY_AFTER_S} seconds.`,
      headers: { 'retry-after': String(RETRY_AFTER_S) },
      expected: true,
    });
  }
}
