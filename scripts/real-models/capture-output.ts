/** Everything a spawned process writes on stdout and stderr, kept for a failure's report. */
export function captureOutput(proc: { stdout: ReadableStream<Uint8Array>; stderr: ReadableStream<Uint8Array> }): () => string {
  let seen = '';
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    // As an iterable: the web app's type check (DOM types, web/test reaches this file) has no async iterator on ReadableStream.
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) seen += decoder.decode(chunk, { stream: true });
  };
  void collect(proc.stdout);
  void collect(proc.stderr);
  return () => seen;
}
