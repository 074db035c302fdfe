/**
 * A response body read as text up to `maxBytes`, or null once it passes them (the rest is never
 * read, the stream is cancelled): for answers from servers a user named (an http agent, a model
 * provider), which must not make the Worker hold an unbounded body.
 */
export async function cappedText(response: Response, maxBytes: number): Promise<string | null> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    text += decoder.decode(value, { stream: true });
  }
}
