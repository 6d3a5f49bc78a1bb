/**
 * Wait until a spawned `parley serve` prints "listening on <url>" and return the URL. The
 * server writes that line to stdout once the socket is bound, so the URL is ready to call.
 * Shared by the tests, the fault scripts and the release smoke test.
 */
export async function waitForListening(proc: { stdout: ReadableStream<Uint8Array> }, timeoutMs = 30_000): Promise<string> {
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  // A server that hangs before printing anything would leave read() pending forever: cancel it.
  const timer = setTimeout(() => void reader.cancel().catch(() => undefined), timeoutMs);
  let seen = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
      const m = /listening on (http:\/\/\S+)/.exec(seen);
      if (m) return m[1]!;
    }
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
  throw new Error(`server did not start (it exited, or printed no "listening on" line within ${timeoutMs} ms): ${seen}`);
}
