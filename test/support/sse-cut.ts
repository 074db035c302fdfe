/**
 * An SSE body cut after its first event (a POST's priming event, which carries the id a client
 * resumes from), as a dropped connection would leave it; the rest is cancelled at the source.
 */
export function firstEventOnly(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) return controller.close();
      seen += decoder.decode(value, { stream: true });
      const end = seen.indexOf("\n\n");
      if (end < 0) return;
      controller.enqueue(new TextEncoder().encode(seen.slice(0, end + 2)));
      await reader.cancel();
      controller.close();
    },
  });
}
