import { signedHeaders } from "../../../workers/webhooks/signing";
import { webhookTargetProblem } from "../../../workers/webhooks/targets";
import { describeFailure } from "./failure";
import { parseRetryAfter } from "./schedule";

/** One HTTP attempt of one delivery, judged the Standard Webhooks way. */

/** The Standard Webhooks recommendation is 15 to 30 s; the low end keeps one slow receiver from holding its queue. */
export const ATTEMPT_TIMEOUT_MS = 15_000;
export const USER_AGENT = "Switchboard-Webhook/1.0";
const ERROR_LIMIT = 500;

export interface AttemptResult {
  delivered: boolean;
  /** 410 Gone: the receiver asks us to stop for good. */
  gone: boolean;
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  retryAfterMs: number | null;
}

export interface AttemptTarget {
  url: string;
  secret: string;
  messageId: string;
  body: string;
  allowedHosts: readonly string[];
}

/** Errors end up in the deliveries log: short, and never carrying the signing secret. */
function cleanError(text: string, secret: string): string {
  const scrubbed = secret ? text.split(secret).join("[secret]") : text;
  return scrubbed.length > ERROR_LIMIT ? `${scrubbed.slice(0, ERROR_LIMIT - 1)}…` : scrubbed;
}

function failed(target: AttemptTarget, error: string, rest: Partial<AttemptResult> = {}): AttemptResult {
  return {
    delivered: false,
    gone: false,
    statusCode: null,
    latencyMs: null,
    retryAfterMs: null,
    ...rest,
    error: cleanError(error, target.secret),
  };
}

function judge(target: AttemptTarget, response: Response, latencyMs: number, now: number): AttemptResult {
  const statusCode = response.status;
  if (statusCode >= 200 && statusCode < 300)
    return { delivered: true, gone: false, statusCode, latencyMs, error: null, retryAfterMs: null };
  if (statusCode === 410) return failed(target, "410 Gone", { gone: true, statusCode, latencyMs });
  const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), now);
  if (statusCode >= 300 && statusCode < 400) {
    const location = response.headers.get("location");
    const to = location ? ` to ${location}` : "";
    return failed(target, `HTTP ${statusCode} redirect${to} (redirects are not followed)`, {
      statusCode,
      latencyMs,
      retryAfterMs,
    });
  }
  return failed(target, `HTTP ${statusCode}`, { statusCode, latencyMs, retryAfterMs });
}

/** POSTs one signed delivery; refuses private targets before any byte leaves (checked every attempt). */
export async function attemptDelivery(target: AttemptTarget, now: () => number): Promise<AttemptResult> {
  const problem = webhookTargetProblem(target.url, target.allowedHosts);
  if (problem) return failed(target, `target refused: ${problem}`);
  const started = now();
  try {
    const signed = await signedHeaders(
      target.secret,
      target.messageId,
      Math.floor(started / 1000),
      target.body,
    );
    const response = await fetch(target.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "User-Agent": USER_AGENT, ...signed },
      body: target.body,
      redirect: "manual",
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    // The answer's body is never used; cancelling frees the connection at once.
    await response.body?.cancel().catch(() => {});
    return judge(target, response, now() - started, now());
  } catch (error) {
    const latencyMs = now() - started;
    const reason = await describeFailure(error, { url: target.url, timeoutMs: ATTEMPT_TIMEOUT_MS });
    return failed(target, reason, { latencyMs });
  }
}
