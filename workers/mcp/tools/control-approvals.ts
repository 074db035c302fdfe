import { z } from "@hono/zod-openapi";
import {
  CompanyParamSchema,
  CreateApprovalBodySchema,
  ListApprovalsQuerySchema,
} from "../../control/approvals";
import { listResultOf } from "./control-issues";
import { callerCompanyId, queryString, restAs } from "./issue-read";
import { type AnyToolDefinition, defineTool, type ToolContext } from "./registry";
import { toolResultOf } from "./rest";

const CompanyField = CompanyParamSchema.shape.companyId
  .optional()
  .describe("The company; defaults to your own (agent keys). Required with a user key");

const RequestToolInput = z.strictObject({
  companyId: CompanyField,
  ...CreateApprovalBodySchema.shape,
  payload: CreateApprovalBodySchema.shape.payload.describe(
    'What the board decides on: {"summary": "what and why", …any details they need}',
  ),
  issueIds: CreateApprovalBodySchema.shape.issueIds.describe(
    "Issues to link (ids or identifiers such as ACM-12), usually the one you work on",
  ),
  type: CreateApprovalBodySchema.shape.type
    .optional()
    .describe("request_board_approval (the default) for anything you need the board to decide"),
});
const ListToolInput = z.strictObject({ companyId: CompanyField, ...ListApprovalsQuerySchema.shape });

/** The company the call is about, or the refusal a user key gets without one. */
function companyPath(ctx: ToolContext, companyId: string | undefined, tail: string) {
  const company = companyId ?? callerCompanyId(ctx);
  if (company === undefined)
    return toolResultOf({
      status: 400,
      body: { error: "companyId: required with a user key (agent keys default to their own company)" },
    });
  return `/companies/${encodeURIComponent(company)}${tail}`;
}

/** Approvals: asking the board for a decision, and reading where those requests stand. */
export const controlApprovalTools: AnyToolDefinition[] = [
  defineTool({
    name: "request_approval",
    domain: "control",
    scope: "control",
    description:
      "Ask the board to approve something before you do it (spending, an irreversible step, a change of " +
      'plan): payload {"summary": "what and why", …any details}, issueIds to link (ids or identifiers). ' +
      "Creates a pending approval; the decision wakes you with PLATFORM_APPROVAL_ID and " +
      "PLATFORM_APPROVAL_STATUS (approved, rejected, revision_requested). Do not act before it is approved. " +
      "Answers the pending approval.",
    inputSchema: RequestToolInput,
    run: async (ctx, { companyId, type, ...fields }) => {
      const path = companyPath(ctx, companyId, "/approvals");
      if (typeof path !== "string") return path;
      const body = { ...fields, type: type ?? "request_board_approval" };
      return toolResultOf(await restAs(ctx, { method: "POST", path, body }));
    },
  }),
  defineTool({
    name: "list_approvals",
    domain: "control",
    scope: "read",
    description:
      "List the company's approvals, newest first, each with type, status, payload, who requested it and " +
      "the board's decisionNote. status filters, comma-separated (pending, revision_requested, approved, " +
      "rejected, cancelled). Answers {approvals: [...]}.",
    inputSchema: ListToolInput,
    annotations: { readOnlyHint: true },
    run: async (ctx, { companyId, status }) => {
      const path = companyPath(ctx, companyId, `/approvals${queryString({ status })}`);
      if (typeof path !== "string") return path;
      return listResultOf(await restAs(ctx, { method: "GET", path }), "approvals");
    },
  }),
];
