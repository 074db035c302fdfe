/**
 * The service hosts two APIs with different error envelopes: the messaging gateway
 * (`{status, message, error}`) and the agent control plane (`{error, details?, code?}`).
 * The path alone decides which one a response uses, so unknown routes and early
 * middleware failures still answer in the envelope the caller expects.
 */
export type ApiFamily = "gateway" | "control";

const CONTROL_PREFIXES = [
  "/api/companies",
  "/api/agents",
  "/api/issues",
  "/api/projects",
  "/api/goals",
  "/api/routines",
  "/api/routine-triggers",
  "/api/approvals",
  "/api/secrets",
  "/api/heartbeat-runs",
  "/api/member-invites",
  "/api/notifications",
  "/llms",
];

export function apiFamilyOf(path: string): ApiFamily {
  return CONTROL_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))
    ? "control"
    : "gateway";
}
