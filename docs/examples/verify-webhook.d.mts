// Types for verify-webhook.mjs, so TypeScript tests can import the documented code as it is.
type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export function verifyWebhook(secret: string, headers: HeaderSource, body: string): unknown;
export function verifyLegacySignature(
  secret: string,
  header: string | null | undefined,
  body: string,
): boolean;
