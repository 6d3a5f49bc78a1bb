/**
 * Wait until a spawned `parley serve` prints "listening on <url>" and return the URL. The
 * server writes that line to stdout once the socket is bound, so the URL is ready to call.
 */
export async function waitForListening(proc: { stdout: ReadableStream<Uint8Array> }, timeoutMs = 30_000): Promise<string> {
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + timeoutMs;
  let seen = '';
  try {
    while (Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
      const m = /listening on (http:\/\/\S+)/.exec(seen);
      if (m) return m[1]!;
    }
  } finally {
    reader.releaseLock();
  }
  throw new Error(`server did not start: ${seen}`);
}
