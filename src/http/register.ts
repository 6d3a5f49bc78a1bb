import { createLimits, type Limits } from './shared-limits';
import type { Elysia } from 'elysia';
import type { AppDeps } from '../deps';
import { authenticate } from '../auth/authenticate';
import { WatchedCredential } from '../auth/credential-watch';
import { compileInput } from './body';
import { collectAfterBody } from './collect-soon';
import { parseJsonBody, readBody } from './body';
import { AppError, errorResponse, forbidden, quotaExceeded, unauthorized } from './errors';
import { QuotaError } from '../usage/usage.types';
import { bodyLimitOf, type AnyOperation } from './operation';
import { guardStream } from './stream-guard';
import { PushStream, pushStreamResponse } from './push-stream';
import { TurnAbandoned, type Turnstile } from './turnstile';
import { logRequest, pathOf, startRequest, stampedJson, stampResponse, stampStreamHeaders } from './request-stamp';
import { invalidHostError } from './hostless-request';
import { checkUpload } from './upload';
import { bodyOverCap } from './user-caps';

/**
 * Mount each operation as `POST /api/<path>`: authenticate, receive and bound the body, wait for
 * a turn (rows with `turns`), parse and validate it, apply the operation's rate limit and the
 * per-user stream cap, then call the handler. The order matters: an anonymous caller learns
 * nothing about the input schema and cannot make the server read a body (401 before 400, 413 and
 * 415), a queued request holds its bytes only, and no stream starts before every check has
 * passed. Every iterator stream is wrapped by `guardStream` (final frame at shutdown, slot released
 * when the client leaves); a push stream gets the same from `pushStreamResponse`. A stream also
 * ends when the credential that opened it is revoked (src/auth/credential-watch.ts). Each answer
 * carries the security headers and a request id, and is logged once (src/http/request-stamp.ts).
 */
export function registerOperations(
  app: Elysia,
  ops: readonly AnyOperation[],
  deps: AppDeps,
  // Per app, not per module: every test builds a fresh app with fresh limits. Shared by the
  // instances on PostgreSQL (src/http/shared-limits.ts), and with the app's other doors (/v1).
  limits: Limits = createLimits(deps),
) {
  for (const op of ops) {
    const validate = compileInput(op.input);
    const maxBodyBytes = bodyLimitOf(op, deps.config);
    const path = `/api/${op.path}`;
    const finish = (request: Request, res: Response, stamp: ReturnType<typeof startRequest>) => {
      logRequest(deps.log, request, res.status, stamp, path);
      return res;
    };
    app.post(
      path,
      async ({ request, set }) => {
        const stamp = startRequest();
        const requestId = stamp.id;
        let release: (() => void) | undefined;
        let releaseTurn: (() => void) | undefined;
        try {
          // The credential is checked before the body is read: an anonymous caller gets 401 for
          // any body (malformed, oversize or of another type) and cannot make the server read one.
          const auth = await authenticate(deps.store, request.headers, deps.config.sessionTtlDays, deps.now());
          const principal = auth?.principal;
          if (!principal && !op.public) throw unauthorized();
          let input: unknown = {};
          // An upload's handler reads its body itself, streaming it where it goes (src/http/upload.ts).
          if (op.upload) checkUpload(request, maxBodyBytes, deps.config.publicUrl);
          else {
            let body: Uint8Array | undefined = op.bodyCap ? await readBody(request, maxBodyBytes).catch((err) => bodyOverCap(err, op.bodyCap!, maxBodyBytes, deps.config)) : await readBody(request, maxBodyBytes);
            // Operations that hold much memory while they run wait here: their body received (an
            // upload left unread would be closed as idle, and a slow one would hold a turn) but not
            // yet decoded, so a waiting request holds its bytes and nothing more.
            if (op.turns) releaseTurn = await takeTurn(op.turns(deps), request.signal);
            collectAfterBody(body.byteLength);
            input = validate(parseJsonBody(body));
            // Parsed, the bytes are garbage: a conversion or a stream that runs on must not keep
            // megabytes of them alive.
            body = undefined;
          }
          // Limits are per user: anonymous calls to public rows are not counted here (a shared
          // "anonymous" bucket would let one client lock everyone out; per-address limits
          // belong to the reverse proxy).
          if (principal && op.rateLimit) {
            const taking = limits.take(principal.user.id, op.path, op.rateLimit);
            if (taking) await taking;
          }
          // After validation, as an ownership check in a handler would be: a bad body is a 400
          // for anyone (the schema is public), a good one from a non-admin never reaches the handler.
          if (op.admin && !principal?.user.isAdmin) throw forbidden();
          if (op.kind === 'sse') {
            if (deps.lifecycle.stopping) throw new AppError('SERVICE_UNAVAILABLE', { headers: { 'retry-after': '2' } });
            if (principal) {
              const slot = limits.acquireStream(principal.user.id);
              release = slot instanceof Promise ? await slot : slot;
            }
          }
          const responseHeaders: Record<string, string> = op.deprecated ? { deprecation: 'true' } : {};
          // Only public rows reach here without a principal; their handler type says so.
          let result = (op.handler as (ctx: unknown) => unknown)({
            input,
            user: principal?.user,
            principal,
            deps,
            request,
            responseHeaders,
            requestId,
          });
          // Most handlers are synchronous: awaiting their plain value would still cost a turn of the microtask queue.
          if (result instanceof Promise) result = await result;
          const push = result instanceof PushStream;
          if (push || (result && typeof result === 'object' && Symbol.asyncIterator in result)) {
            const onEnd = release ?? noop;
            release = undefined; // the stream owns the slot now
            // It also ends, as if its client had left, once the credential that opened it is no
            // longer valid (src/auth/credential-watch.ts).
            const watch = auth && new WatchedCredential(deps.credentialWatch, auth.ref, auth.principal.user.id);
            const guard = { shutdown: deps.lifecycle.signal, client: request.signal, finalFrame: op.finalFrame, onEnd, watch };
            let stream: unknown;
            if (push) {
              const headers: Record<string, string> = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...responseHeaders };
              stampStreamHeaders(headers, stamp);
              // May throw (the stream could not start): then the 500 below is the request's one line.
              stream = pushStreamResponse(result as PushStream, { ...guard, bufferEvents: deps.config.sseBufferEvents, heartbeats: deps.heartbeats, headers });
            } else {
              stampStreamHeaders(set.headers, stamp);
              stream = guardStream(result as AsyncGenerator<unknown>, guard);
            }
            logRequest(deps.log, request, 200, stamp, path);
            return stream;
          }
          if (result instanceof Response) return finish(request, stampResponse(result, stamp), stamp);
          return finish(request, stampedJson(JSON.stringify(result), stamp, responseHeaders), stamp);
        } catch (err) {
          return finish(request, stampResponse(renderError(err, deps, requestId, op.path), stamp), stamp);
        } finally {
          release?.();
          releaseTurn?.();
        }
      },
      { parse: 'none' },
    );
  }
}

const noop = () => {};

/**
 * A turn at the operation's turnstile; a client that left while waiting gets (and reads) nothing:
 * 499, like a client that leaves mid-upload (src/http/body.ts), so it is no error in the log.
 */
async function takeTurn(turns: Turnstile, signal: AbortSignal): Promise<() => void> {
  try {
    return await turns.acquire(signal);
  } catch (err) {
    if (err instanceof TurnAbandoned) throw new AppError('CLIENT_CLOSED_REQUEST', { message: err.message });
    throw err;
  }
}

/**
 * A route that is not an operation row (health, OpenAPI, docs, the OAuth redirects): the same
 * error envelope, headers and request line as an operation.
 */
export const pageRoute =
  <C extends { request: Request }>(deps: AppDeps, fn: (ctx: C) => Response | Promise<Response>) =>
  async (ctx: C): Promise<Response> => {
    const stamp = startRequest();
    let res: Response;
    try {
      // Bun passes some Hosts that are no host through into the URL ("pi:abc", "[::1"). Pages
      // may build URLs from the request's (the sign-in flow does), operations never do: a page
      // checks, once, what an operation need not pay for on every request.
      if (!URL.canParse(ctx.request.url)) throw invalidHostError();
      res = await fn(ctx);
    } catch (err) {
      res = renderError(err, deps, stamp.id, pathOf(ctx.request.url));
    }
    stampResponse(res, stamp);
    logRequest(deps.log, ctx.request, res.status, stamp);
    return res;
  };

export function renderError(err: unknown, deps: AppDeps, requestId: string, where: string): Response {
  if (err instanceof QuotaError) return errorResponse(quotaExceeded(err, deps.now()));
  if (err instanceof AppError) {
    if (err.status >= 500 && !err.expected) deps.log.error('request failed', { requestId, where, code: err.code, cause: describe(err.cause ?? err) });
    return errorResponse(err);
  }
  deps.log.error('unexpected error', { requestId, where, cause: describe(err) });
  return errorResponse(new AppError('INTERNAL_SERVER_ERROR'));
}

const describe = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ''}` : String(err));
