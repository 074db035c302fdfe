/**
 * Why an attempt got no HTTP answer, for the deliveries log: DNS, connect (refused or reset), TLS or
 * timeout, with the host and port. workerd's fetch says less than that: an unresolvable name and a
 * failed TLS handshake both reject with the opaque `internal error; reference = …` (the reason goes
 * to workerd's own log only), and a refused port and a connection closed unanswered both with
 * `Network connection lost.`. So after such a failure one plain TCP connection to the same host and
 * port (no byte sent) tells them apart: it fails when the name does not resolve or nothing listens,
 * and opens when the failure came later, in TLS or after the connection was made.
 */

const PROBE_TIMEOUT_MS = 5_000;

/** Whether a TCP connection to host:port opens; null when the probe itself could not say in time. */
export type Reachability = "opens" | "fails" | null;

export interface FailureTarget {
  url: string;
  /** The attempt's time limit, for the timeout reason. */
  timeoutMs: number;
}

const nameOf = (error: unknown): string | null =>
  typeof error === "object" && error !== null && "name" in error ? String(error.name) : null;

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error);

/** AbortSignal.timeout rejects with a DOMException, which is not always an Error subclass. */
export const isTimeout = (error: unknown): boolean => {
  const name = nameOf(error);
  return name === "TimeoutError" || name === "AbortError";
};

/** workerd's two opaque rejections, which need the probe to be told apart. */
export function needsProbe(error: unknown): boolean {
  if (isTimeout(error)) return false;
  const message = messageOf(error);
  return message.startsWith("internal error") || message.startsWith("Network connection lost");
}

function endpointOf(url: URL): { host: string; port: number; tls: boolean } {
  const tls = url.protocol === "https:";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return { host, port: url.port ? Number(url.port) : tls ? 443 : 80, tls };
}

const isIpLiteral = (host: string): boolean => /^[\d.]+$/.test(host) || host.includes(":");

/** Opens one plain TCP connection to the URL's host and port and closes it at once. */
export async function probeReachability(url: string): Promise<Reachability> {
  const { host, port } = endpointOf(new URL(url));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), PROBE_TIMEOUT_MS);
  });
  try {
    // Imported here, not at the top: scripts/write-openapi.ts loads the app in Node, which has no
    // `cloudflare:` modules; only a failed delivery in workerd ever reaches this line.
    const { connect } = await import("cloudflare:sockets");
    const socket = connect({ hostname: host, port });
    // A failed connection rejects `closed` too; nobody else waits on it.
    socket.closed.catch(() => undefined);
    const opened = socket.opened.then(
      () => "opens" as const,
      () => "fails" as const,
    );
    const verdict = await Promise.race([opened, late]);
    socket.close().catch(() => undefined);
    return verdict;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** Words other runtimes and proxies use (Node's fetch, a platform's own messages), kept as said; else null. */
function fromWords(message: string, where: string, host: string): string | null {
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo|DNS|resolve/i.test(message))
    return `DNS lookup failed for ${host}: ${message}`;
  if (/ECONNREFUSED|refused/i.test(message)) return `connection refused by ${where}: ${message}`;
  if (/ECONNRESET|reset|socket hang up/i.test(message)) return `connection reset by ${where}: ${message}`;
  if (/TLS|SSL|certificate|handshake/i.test(message)) return `TLS handshake failed with ${where}: ${message}`;
  return null;
}

/**
 * The reason an attempt failed without an answer. `reachable` is the probe's verdict when one was
 * made (needsProbe), else null.
 */
export function failureReason(error: unknown, target: FailureTarget, reachable: Reachability): string {
  const url = new URL(target.url);
  const { host, port, tls } = endpointOf(url);
  const where = `${host}:${port}`;
  if (isTimeout(error)) return `timeout: ${where} sent no answer within ${target.timeoutMs / 1000} s`;
  const message = messageOf(error);
  if (message.startsWith("internal error")) {
    if (reachable === "fails")
      return isIpLiteral(host)
        ? `connection failed: could not connect to ${where}`
        : `DNS lookup failed: ${host} could not be resolved (check the webhook URL's host name)`;
    if (reachable === "opens")
      return tls
        ? `TLS handshake failed with ${where}: an untrusted or expired certificate, or the port does not speak HTTPS`
        : `request failed: ${where} accepted the connection, then the request failed (workerd gave no reason: ${message})`;
    return tls
      ? `could not reach ${where}: DNS lookup, connection or TLS handshake failed (workerd gave no reason: ${message})`
      : `could not reach ${where}: DNS lookup or connection failed (workerd gave no reason: ${message})`;
  }
  if (message.startsWith("Network connection lost")) {
    if (reachable === "fails")
      return `connection refused: nothing accepts connections on ${where} (is the receiver running?)`;
    if (reachable === "opens") return `connection reset: ${where} closed the connection before answering`;
    return `connection failed: ${where} refused the connection or closed it before answering`;
  }
  return fromWords(message, where, host) ?? `request failed: ${message}`;
}

/** The reason for the log, probing first when workerd's message alone cannot tell. */
export async function describeFailure(error: unknown, target: FailureTarget): Promise<string> {
  const reachable = needsProbe(error) ? await probeReachability(target.url) : null;
  return failureReason(error, target, reachable);
}
