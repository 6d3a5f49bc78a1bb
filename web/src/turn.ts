import { ApiError, failure, post, SIGNED_OUT } from './api';
import { readFrames } from './sse';

/** What the page shows of an answer being written. */
export interface Answer {
  text: string;
  state: 'waiting' | 'streaming' | 'done' | 'failed' | 'stopped';
  error?: string;
  responseId?: string;
}

export interface TurnHooks {
  /** The request made a new conversation. */
  onConversation?(conversationId: string): void;
  onAnswer(answer: Answer): void;
}

/**
 * The answer being written in a conversation survives a reload: its response id is kept in
 * localStorage until the answer ends, and the page that loads the conversation follows it again
 * from its first event (`chat/resumeStream`), so the text is rebuilt whole, without a gap or a
 * repeat. (sessionStorage would not do: a tab closed and reopened, or a second tab, starts empty.)
 */
const pendingKey = (conversationId: string) => `parley.answering.${conversationId}`;
export const pendingResponse = (conversationId: string) => localStorage.getItem(pendingKey(conversationId)) ?? undefined;
export const forgetPending = (conversationId: string) => localStorage.removeItem(pendingKey(conversationId));

const CANCELLED = 'The response was cancelled.';
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** What a turn may carry besides its text: the model to answer it (the server's own if none) and images as data URLs. */
export interface TurnExtras {
  model?: string;
  images?: string[];
}

/** Send a message and follow its answer to the end. */
export function sendMessage(message: string, conversationId: string | undefined, hooks: TurnHooks, signal: AbortSignal, extras: TurnExtras = {}): Promise<void> {
  const body = {
    message,
    ...(conversationId ? { conversationId } : {}),
    ...(extras.model ? { model: extras.model } : {}),
    ...(extras.images?.length ? { images: extras.images.map((imageUrl) => ({ imageUrl })) } : {}),
  };
  return follow(() => post('chat/stream', body, { signal }), { conversationId }, hooks, signal);
}

/** Follow an answer already being written (after a reload), from its first event. */
export function resumeAnswer(conversationId: string, responseId: string, hooks: TurnHooks, signal: AbortSignal): Promise<void> {
  return follow(() => post('chat/resumeStream', { responseId, after: 0 }, { signal }), { conversationId, responseId }, hooks, signal);
}

async function follow(open: () => Promise<Response>, start: { conversationId?: string; responseId?: string }, hooks: TurnHooks, signal: AbortSignal) {
  let { conversationId, responseId } = start;
  // The last event applied: a reconnect asks for what comes after it, and anything at or below
  // it (a frame the server sends again) is dropped, so no delta is shown twice.
  let seq = 0;
  const answer: Answer = { text: '', state: 'waiting', responseId };
  const show = () => hooks.onAnswer({ ...answer });
  const end = (state: Answer['state'], error?: string) => {
    Object.assign(answer, { state, error });
    if (conversationId) forgetPending(conversationId);
    show();
  };
  show();
  let failures = 0;
  let request = open;
  while (!signal.aborted) {
    try {
      const res = await request();
      if (!res.ok) {
        const err = await failure(res);
        if (res.status === 401) dispatchEvent(new Event(SIGNED_OUT));
        // 404 on a resume: the answer is gone (its conversation was deleted). 4xx will not get better.
        if (res.status < 500 && res.status !== 429) return end('failed', err.message);
        throw err;
      }
      for await (const { id, data } of readFrames(res.body!)) {
        if (id) {
          const n = Number(id.slice(id.lastIndexOf(':') + 1));
          if (n <= seq) continue;
          seq = n;
        }
        failures = 0;
        switch (data.type) {
          case 'conversation.created':
            conversationId = String(data.conversationId);
            hooks.onConversation?.(conversationId);
            break;
          case 'response.created':
            answer.responseId = responseId = String(data.responseId);
            if (conversationId) localStorage.setItem(pendingKey(conversationId), responseId);
            break;
          case 'text.delta':
            answer.text += String(data.delta);
            answer.state = 'streaming';
            show();
            break;
          case 'done':
            return end('done');
          case 'error':
            return data.message === CANCELLED ? end('stopped') : end('failed', String(data.message));
        }
      }
      // The stream ended without `done` or `error`: the connection was cut (network, proxy, restart).
    } catch (err) {
      if (signal.aborted) return;
      // Lost connections, cut frames and the server's 5xx or 429 are worth another try; a bug is not.
      if (!(err instanceof TypeError || err instanceof DOMException || err instanceof SyntaxError || err instanceof ApiError)) throw err;
    }
    if (!responseId) return end('failed', 'The connection was lost before the answer started. Send the message again.');
    const id = responseId;
    request = () => post('chat/resumeStream', { responseId: id, after: seq }, { signal });
    // Back off while the network is gone: 0.5 s, 1 s, 2 s, then every 4 s.
    await sleep(Math.min(4000, 500 * 2 ** failures++), signal);
  }
}
