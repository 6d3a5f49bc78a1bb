import type { AppDeps } from '../deps';
import type { Config } from '../config';
import type { User } from '../db/schema';
import { authenticate } from '../auth/authenticate';
import { AppError, OpenAiError, openAiErrorOf, openAiErrorResponse, unauthorized } from '../http/errors';
import { parseJsonBody, readBody } from '../http/body';
import type { Limits } from '../http/shared-limits';
import { logRequest, pathOf, startRequest, stampedJson, stampResponse, type RequestStamp } from '../http/request-stamp';
import { AiError } from '../ai/ai.types';
import { QuotaError, type UsageCaller } from '../usage/usage.types';

/**
 * The pipeline of every `/v1` route (docs/openai-api.md), the door's twin of the operations'
 * (src/http/register.ts), in the same order: authenticate with an API key (401 before the body is
 * read), receive and bound the body (413, 415), parse it, take a token of the `ai` rate limit,
 * then the handler. Every failure is answered in OpenAI's error shape, never Parley's envelope;
 * every answer carries the security headers and a request id and is logged once.
 */
export interface V1Context {
  request: Request;
  user: User;
  /** Who calls, for usage metering: the user and the API key. */
  caller: UsageCaller;
  deps: AppDeps;
  requestId: string;
  body: unknown;
  params: Record<string, string>;
  query: URLSearchParams;
  /** Hold one of the user's stream slots (PARLEY_MAX_STREAMS_PER_USER, else 429) until the returned release. */
  holdStream(): Promise<() => void>;
}

export interface V1RouteOptions {
  /** Read a JSON body of at most this many bytes. */
  bodyBytes?: (config: Config) => number;
  /** Take a token of the `ai` rate limit (PARLEY_RATE_LIMIT_AI), as Parley's own model calls do. */
  rateLimited?: boolean;
}

export type V1Handler = (ctx: V1Context) => Promise<Response | object> | Response | object;

/** The caller's Parley API key, from `Authorization: Bearer` (what OpenAI's clients send) or `x-api-key`. */
function apiKeyOf(headers: Headers): string | undefined {
  const key = headers.get('x-api-key')?.trim();
  if (key) return key;
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.get('authorization') ?? '')?.[1]?.trim();
  return bearer || undefined;
}

export function v1Route(deps: AppDeps, limits: Limits, name: string, opts: V1RouteOptions, handler: V1Handler) {
  return async ({ request, params }: { request: Request; params?: Record<string, string> }): Promise<Response> => {
    const stamp = startRequest();
    const path = pathOf(request.url);
    let res: Response;
    try {
      const key = apiKeyOf(request.headers);
      // Looked up as an API key whichever header carried it: a session token is not one.
      const auth = key ? await authenticate(deps.store, new Headers({ 'x-api-key': key }), deps.config.sessionTtlDays, deps.now()) : undefined;
      if (!auth || auth.principal.credential.kind !== 'apiKey') throw unauthorized();
      const { user, credential } = auth.principal;
      const body = opts.bodyBytes ? parseJsonBody(await readBody(request, Math.min(opts.bodyBytes(deps.config), deps.config.maxBodyBytes))) : undefined;
      if (opts.rateLimited) {
        const taking = limits.take(user.id, `v1/${name}`, 'ai');
        if (taking) await taking;
      }
      const out = await handler({
        request,
        user,
        caller: { userId: user.id, apiKeyId: credential.keyId },
        deps,
        requestId: stamp.id,
        body,
        params: params ?? {},
        query: new URL(request.url).searchParams,
        async holdStream() {
          if (deps.lifecycle.stopping) throw new AppError('SERVICE_UNAVAILABLE', { headers: { 'retry-after': '2' } });
          const slot = limits.acquireStream(user.id);
          return slot instanceof Promise ? await slot : slot;
        },
      });
      res = out instanceof Response ? stampResponse(out, stamp) : stampedJson(JSON.stringify(out), stamp);
    } catch (err) {
      res = stampResponse(v1ErrorResponse(err, deps, stamp, path), stamp);
    }
    logRequest(deps.log, request, res.status, stamp, path);
    return res;
  };
}

/** Anything a `/v1` route throws, in OpenAI's shape; what is not a known refusal is a 500 that leaks nothing. */
export function v1ErrorResponse(err: unknown, deps: AppDeps, stamp: RequestStamp, where: string): Response {
  return openAiErrorResponse(toOpenAiError(err, deps, stamp.id, where));
}

export function toOpenAiError(err: unknown, deps: AppDeps, requestId: string, where: string): OpenAiError {
  if (err instanceof OpenAiError) return err;
  if (err instanceof QuotaError) return quotaError(err, deps.now());
  if (err instanceof AppError) {
    if (err.status >= 500 && !err.expected) deps.log.error('request failed', { requestId, where, code: err.code, cause: String(err.cause ?? err.message) });
    return openAiErrorOf(err);
  }
  if (err instanceof AiError) {
    if (err.detail) deps.log.warn('v1 upstream failed', { requestId, where, error: err.message, upstream: err.detail });
    return new OpenAiError(502, err.message, 'server_error');
  }
  deps.log.error('unexpected error', { requestId, where, cause: err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ''}` : String(err) });
  return openAiErrorOf(new AppError('INTERNAL_SERVER_ERROR'));
}

/**
 * A quota refusal (src/usage/): OpenAI's `insufficient_quota` 429, with when the limit resets.
 * `x-should-retry: false` stops the `openai` SDKs' own retries: they retry a 429 after waiting
 * whatever `Retry-After` says, which here is hours away (docs/openai-api.md, "Quotas and clients").
 */
function quotaError(err: QuotaError, now: number): OpenAiError {
  const headers: Record<string, string> = { 'x-should-retry': 'false' };
  if (err.resetAt !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil((err.resetAt - now) / 1000)));
  return new OpenAiError(429, err.message, 'insufficient_quota', 'insufficient_quota', null, headers);
}

/** An event stream's answer: its head, with the body the route writes. */
export const sseResponse = (body: ReadableStream<Uint8Array>) =>
  new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' } });
