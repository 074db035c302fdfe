/** Polls `probe` until it returns something other than false/undefined/null, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => T | false | undefined | null,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = probe();
    if (value !== false && value !== undefined && value !== null) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
