/**
 * A WhatsApp-style message id (`3EB0` + 20 upper-case hex, like Baileys' own) derived from `seed`.
 * Broadcasts and scheduled messages send with it so that a retry after an unknown outcome (a bridge
 * killed mid-send) is the same message, which the network delivers once.
 */
export async function deterministicMessageId(seed: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(seed)));
  const hex = [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `3EB0${hex.slice(0, 20).toUpperCase()}`;
}
