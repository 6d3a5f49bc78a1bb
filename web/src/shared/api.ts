/**
 * The web app talks to Parley like any other client: `POST /api/<operation>` with JSON, signed in
 * by the `parley_session` cookie the browser holds (same origin, so no token is ever visible to
 * the page's script).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The envelope's `data`, when it has one (a cap's `{reason: "cap", cap, max}`). */
    readonly data?: Record<string, unknown>,
    /** A 429's or 503's `Retry-After`, in seconds. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export function post(operation: string, body: unknown = {}, init: { signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`/api/${operation}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify(body),
    signal: init.signal,
  });
}

/** Read an error envelope into an ApiError (or a plain one for what is not an envelope). */
export async function failure(res: Response): Promise<ApiError> {
  const envelope = (await res.json().catch(() => undefined)) as { code?: string; message?: string; data?: Record<string, unknown> } | undefined;
  const retryAfter = Number(res.headers.get('retry-after')) || undefined;
  return new ApiError(res.status, envelope?.code ?? 'HTTP_ERROR', envelope?.message ?? `The server answered ${res.status}.`, envelope?.data, retryAfter);
}

/** Fired when the server says the session is gone (expired, ended on another device): the app shows the sign-in page. */
export const SIGNED_OUT = 'parley:signed-out';

export async function call<T>(operation: string, body: unknown = {}): Promise<T> {
  const res = await post(operation, body);
  if (!res.ok) {
    if (res.status === 401 && operation !== 'auth/getSession') dispatchEvent(new Event(SIGNED_OUT));
    throw await failure(res);
  }
  return (await res.json()) as T;
}

export interface User {
  id: string;
  email: string;
  name: string;
  /** Set with `parley user set --admin` (the admin pages show for these users only). */
  isAdmin?: boolean;
}
export interface Conversation {
  id: string;
  title: string;
  /** Someone else's id in a conversation shared with the user (they write to it; its owner shares and deletes it). */
  ownerId: string;
  updatedAt: string;
  /** Its latest AI turn: a research run's conversation opens on the research page. */
  lastResponse?: { id: string; kind: 'chat' | 'research'; status: string } | null;
  groupChatId?: string | null;
}
export interface Item {
  id: string;
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string;
  createdAt: string;
}
export interface Provider {
  id: string;
  name: string;
  signInUrl: string;
}

/** An API key as `auth/listApiKeys` and `admin/listApiKeys` list it (never its secret). */
export interface ApiKey {
  keyId: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** Fired when conversations were added or changed outside the chat (an import): the list loads again. */
export const CONVERSATIONS_CHANGED = 'parley:conversations-changed';
