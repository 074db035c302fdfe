/**
 * Splits a stream of text chunks into lines for an adapter's parser. A line longer than the cap (a
 * CLI printing a huge tool result on one line) is handed over cut, rather than held in memory.
 */
const LINE_MAX_CHARS = 4 * 1024 * 1024;

export class LineSplitter {
  private partial = "";

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: string): void {
    const parts = `${this.partial}${chunk}`.split("\n");
    this.partial = parts.pop() ?? "";
    for (const line of parts) this.onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
    if (this.partial.length > LINE_MAX_CHARS) {
      this.onLine(this.partial);
      this.partial = "";
    }
  }

  /** The last line, when the stream did not end with a newline. */
  end(): void {
    if (this.partial) this.onLine(this.partial);
    this.partial = "";
  }
}
