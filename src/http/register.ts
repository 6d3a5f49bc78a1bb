import type { Elysia } from 'elysia';
import type { AppDeps } from '../deps';
import { authenticate } from '../auth/authenticate';
import { compileInput } from './body';
import { readJsonBody } from './body';
import { AppError, errorResponse, unauthorized } from './errors';
import type { AnyOperation } from './operation';

export interface RequestMeta {
  id: string;
  start: number;
}

/**
 * Mount each operation as `POST /api/<path>`: read and bound the body, authenticate, validate,
 * then call the handler. The order matters: an anonymous caller learns nothing about the input
 * schema (401 before 400), and no stream starts before every check has passed.
 */
export function registerOperations(
  app: Elysia,
  ops: readonly AnyOperation[],
  deps: AppDeps,
  meta: WeakMap<Request, RequestMeta>,
) {
  for (const op of ops) {
    const validate = compileInput(op.input);
    app.post(
      `/api/${op.path}`,
      async ({ request }) => {
        const requestId = meta.get(request)?.id ?? '';
        try {
          const raw = await readJsonBody(request, deps.config.maxBodyBytes);
          const principal = authenticate(deps.db, request.headers, deps.config.sessionTtlDays, deps.now());
          if (!principal && !op.public) throw unauthorized();
          const input = validate(raw);
          const responseHeaders: Record<string, string> = op.deprecated ? { deprecation: 'true' } : {};
          // Only public rows reach here without a principal; their handler type says so.
          const result = await (op.handler as (ctx: unknown) => unknown)({
            input,
            user: principal?.user,
            principal,
            deps,
            request,
            responseHeaders,
            requestId,
          });
          if (result instanceof Response) return result;
          if (result && typeof result === 'object' && Symbol.asyncIterator in result) return result;
          return new Response(JSON.stringify(result), {
            status: 200,
            headers: { 'content-type': 'application/json', ...responseHeaders },
          });
        } catch (err) {
          return renderError(err, deps, requestId, op.path);
        }
      },
      { parse: 'none' },
    );
  }
}

export function renderError(err: unknown, deps: AppDeps, requestId: string, where: string): Response {
  if (err instanceof AppError) {
    if (err.status >= 500) deps.log.error('request failed', { requestId, where, code: err.code, cause: describe(err.cause ?? err) });
    return errorResponse(err);
  }
  deps.log.error('unexpected error', { requestId, where, cause: describe(err) });
  return errorResponse(new AppError('INTERNAL_SERVER_ERROR'));
}

const describe = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ''}` : String(err));
