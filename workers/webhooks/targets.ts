/**
 * Where the Worker may send a user-given URL: webhook targets (when set and before every attempt),
 * package archive URLs (every redirect hop) and media URLs (before a send reaches the bridge). The
 * rules are the shared guard's (bridge/src/protocol/address-guard.ts): http(s) only, no credentials,
 * no private IP literal in any IPv4 or IPv6 spelling, no name only a local network answers for.
 *
 * A Worker cannot resolve names itself, so a public-looking name whose DNS answer is private is not
 * caught here (docs/security.md says what that leaves); the bridge checks its DNS answers. Deliveries
 * never follow redirects (a 3xx is a failed attempt), so a redirect cannot lead inside.
 * `WEBHOOK_ALLOWED_HOSTS` (comma-separated host names or IPs) exempts specific private hosts; local
 * development allows 127.0.0.1 and localhost that way.
 */
export {
  allowedHostsOf,
  urlTargetProblem as webhookTargetProblem,
} from "../../bridge/src/protocol/address-guard";
