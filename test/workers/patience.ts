/**
 * How long a workers test waits for something that should happen. Only a failing test ever waits
 * this long, so it is generous: CI machines run these suites on two busy cores, where a Durable
 * Object alarm or a WebSocket frame can take seconds. It stays below the 30 s test timeout so a
 * wait that never ends reports what it was waiting for rather than a bare timeout.
 */
export const PATIENCE_MS = 20_000;

/** Polls `probe` until it answers true, or fails after `timeoutMs`. */
export async function eventually(probe: () => Promise<boolean>, timeoutMs = PATIENCE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
