import { post } from '../shared/api';
import { followResponse } from '../shared/follow-response';
import { applyExtra, emptyExtras, type AnswerExtras } from './answer-parts';

/** What the page shows of an answer being written. */
export interface Answer {
  text: string;
  state: 'waiting' | 'streaming' | 'done' | 'failed' | 'stopped';
  error?: string;
  responseId?: string;
  /** The model, reasoning, tools used, documents read, images and canvases made (answer-parts.ts). */
  extras: AnswerExtras;
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
/** What a turn may carry besides its text: the model to answer it (the server's own if none) and images as data URLs. */
export interface TurnExtras {
  model?: string;
  images?: string[];
  /** Uploaded files (documents, images) by id: the model reads a document with `read_file`. */
  files?: string[];
  /** The assistant to answer (docs/assistants.md): the conversation keeps it. */
  assistantId?: string;
}

/** Send a message and follow its answer to the end. */
export function sendMessage(message: string, conversationId: string | undefined, hooks: TurnHooks, signal: AbortSignal, extras: TurnExtras = {}): Promise<void> {
  const body = {
    message,
    ...(conversationId ? { conversationId } : {}),
    ...(extras.model ? { model: extras.model } : {}),
    ...(extras.images?.length ? { images: extras.images.map((imageUrl) => ({ imageUrl })) } : {}),
    ...(extras.files?.length ? { files: extras.files } : {}),
    ...(extras.assistantId ? { assistantId: extras.assistantId } : {}),
  };
  return follow(() => post('chat/stream', body, { signal }), { conversationId }, hooks, signal);
}

/** Follow an answer already being written (after a reload), from its first event. */
export function resumeAnswer(conversationId: string, responseId: string, hooks: TurnHooks, signal: AbortSignal): Promise<void> {
  return follow(() => post('chat/resumeStream', { responseId, after: 0 }, { signal }), { conversationId, responseId }, hooks, signal);
}

function follow(open: () => Promise<Response>, start: { conversationId?: string; responseId?: string }, hooks: TurnHooks, signal: AbortSignal) {
  let { conversationId, responseId } = start;
  const answer: Answer = { text: '', state: 'waiting', responseId, extras: emptyExtras() };
  const show = () => hooks.onAnswer({ ...answer, extras: { ...answer.extras } });
  const end = (state: Answer['state'], error?: string) => {
    Object.assign(answer, { state, error });
    if (conversationId) forgetPending(conversationId);
    show();
    return false;
  };
  show();
  return followResponse(
    open,
    {
      responseId: () => responseId,
      onFailure: (message) => void end('failed', message),
      lostBeforeStart: 'The connection was lost before the answer started. Send the message again.',
      onEvent(data) {
        switch (data.type) {
          case 'conversation.created':
            conversationId = String(data.conversationId);
            hooks.onConversation?.(conversationId);
            break;
          case 'response.created':
            answer.responseId = responseId = String(data.responseId);
            if (conversationId) localStorage.setItem(pendingKey(conversationId), responseId);
            applyExtra(answer.extras, data);
            show();
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
          default:
            if (applyExtra(answer.extras, data)) show();
        }
        return true;
      },
    },
    signal,
  );
}
