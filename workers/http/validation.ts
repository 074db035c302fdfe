import type { ZodError } from "zod";
import { badRequest } from "./errors";

type Issue = ZodError["issues"][number];

/** "email: Invalid email address; role: Invalid option" — one readable line for the error field. */
export function describeIssues(target: string, issues: readonly Issue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.join(".") : target;
      return `${path}: ${issue.message}`;
    })
    .join("; ");
}

/**
 * The zod-openapi default hook: a failed body, param or query validation becomes a 400 in the
 * envelope of the route's family, before the handler runs (so nothing is written).
 */
export function rejectInvalidInput(
  result: { target: string } & ({ success: true } | { success: false; error: ZodError }),
): void {
  if (!result.success) {
    const issues = result.error.issues;
    throw badRequest(
      describeIssues(result.target, issues),
      issues.map(({ path, message, code }) => ({ path, message, code })),
    );
  }
}
