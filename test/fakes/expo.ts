/**
 * A local stand-in for Expo's push service, speaking its HTTP API:
 *   POST /--/api/v2/push/send         body: [message…] (gzip when large) → {data: [ticket…]}
 *   POST /--/api/v2/push/getReceipts  body: {ids}                      → {data: {id: receipt}}
 * Like the real service it refuses more than 100 messages or 300 receipt ids per request.
 * What happens to a push is chosen by its token, so tests sharing the server do not interfere:
 *   ExponentPushToken[gone-…]       error ticket DeviceNotRegistered
 *   ExponentPushToken[toobig-…]     error ticket MessageTooBig
 *   ExponentPushToken[lategone-…]   ok ticket, receipt DeviceNotRegistered
 *   ExponentPushToken[lateerror-…]  ok ticket, receipt error MessageRateExceeded
 *   ExponentPushToken[noreceipt-…]  ok ticket, no receipt yet
 *   anything else                   ok ticket, ok receipt
 * `rateLimitNext(n)` answers the next n send requests with 429 (the SDK retries them).
 *
 * expo-server-sdk fixes its base URL when first loaded, so one server serves the whole test
 * process (`sharedFakeExpo()`).
 */

export interface ExpoMessage {
  to: string | string[];
  title?: string;
  body?: string;
  data?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface RecordedRequest {
  path: string;
  gzip: boolean;
  authorization: string | null;
  body: unknown;
  status: number;
}

export interface FakeExpo {
  url: string;
  requests: RecordedRequest[];
  /** Every message accepted, in order. */
  delivered: ExpoMessage[];
  rateLimitNext(n: number): void;
  reset(): void;
  stop(): void;
}

type Pending = { kind: 'ok' } | { kind: 'error'; error: string; token: string } | { kind: 'missing' };

function startFakeExpo(): FakeExpo {
  let rateLimited = 0;
  const requests: RecordedRequest[] = [];
  const delivered: ExpoMessage[] = [];
  const receipts = new Map<string, Pending>();
  const json = (body: unknown, status = 200) => Response.json(body, { status });
  const apiError = (status: number, code: string, message: string) => json({ errors: [{ code, message }] }, status);

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const gzip = req.headers.get('content-encoding') === 'gzip';
      const raw = new Uint8Array(await req.arrayBuffer());
      const text = new TextDecoder().decode(gzip ? Bun.gunzipSync(raw) : raw);
      const record: RecordedRequest = { path, gzip, authorization: req.headers.get('authorization'), body: undefined, status: 200 };
      requests.push(record);
      const answer = (res: Response) => ((record.status = res.status), res);
      try {
        record.body = JSON.parse(text);
      } catch {
        return answer(apiError(400, 'VALIDATION_ERROR', 'body is not JSON'));
      }
      if (req.method !== 'POST') return answer(apiError(405, 'METHOD_NOT_ALLOWED', 'POST only'));

      if (path === '/--/api/v2/push/send') {
        if (rateLimited > 0) {
          rateLimited--;
          return answer(apiError(429, 'TOO_MANY_REQUESTS', 'You are sending too many notifications'));
        }
        const messages = (Array.isArray(record.body) ? record.body : [record.body]) as ExpoMessage[];
        const flat = messages.flatMap((m) => (Array.isArray(m.to) ? m.to.map((to) => ({ ...m, to })) : [m]));
        if (flat.length > 100) return answer(apiError(400, 'PUSH_TOO_MANY_NOTIFICATIONS', 'You are trying to send more than 100 push notifications in one request'));
        const tickets = flat.map((m) => {
          const token = m.to as string;
          const tag = /\[(\w+)-/.exec(token)?.[1];
          if (tag === 'gone')
            return { status: 'error', message: `"${token}" is not a registered push notification recipient`, details: { error: 'DeviceNotRegistered', expoPushToken: token } };
          if (tag === 'toobig') return { status: 'error', message: 'Message too big', details: { error: 'MessageTooBig' } };
          delivered.push(m);
          const id = crypto.randomUUID();
          receipts.set(
            id,
            tag === 'lategone'
              ? { kind: 'error', error: 'DeviceNotRegistered', token }
              : tag === 'lateerror'
                ? { kind: 'error', error: 'MessageRateExceeded', token }
                : tag === 'noreceipt'
                  ? { kind: 'missing' }
                  : { kind: 'ok' },
          );
          return { status: 'ok', id };
        });
        return answer(json({ data: tickets }));
      }

      if (path === '/--/api/v2/push/getReceipts') {
        const ids = (record.body as { ids?: unknown }).ids;
        if (!Array.isArray(ids)) return answer(apiError(400, 'VALIDATION_ERROR', '"ids" must be an array'));
        if (ids.length > 300) return answer(apiError(400, 'PUSH_TOO_MANY_RECEIPTS', 'more than 300 receipt ids'));
        const data: Record<string, unknown> = {};
        for (const id of ids as string[]) {
          const r = receipts.get(id);
          if (!r || r.kind === 'missing') continue;
          data[id] =
            r.kind === 'ok'
              ? { status: 'ok' }
              : { status: 'error', message: `delivery failed: ${r.error}`, details: { error: r.error, ...(r.error === 'DeviceNotRegistered' ? { expoPushToken: r.token } : {}) } };
        }
        return answer(json({ data }));
      }
      return answer(apiError(404, 'NOT_FOUND', 'not found'));
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    delivered,
    rateLimitNext: (n) => void (rateLimited = n),
    reset() {
      rateLimited = 0;
      requests.length = 0;
      delivered.length = 0;
      receipts.clear();
    },
    stop: () => void server.stop(true),
  };
}

const KEY = Symbol.for('parley.test.fakeExpo');

/** The process-wide fake (see the header comment for why there is only one). */
export function sharedFakeExpo(): FakeExpo {
  const g = globalThis as unknown as Record<symbol, FakeExpo | undefined>;
  return (g[KEY] ??= startFakeExpo());
}
