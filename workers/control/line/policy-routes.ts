import { createRoute, z } from "@hono/zod-openapi";
import { refOf } from "../../core/actor";
import { MCP_TOOL_POLICIES } from "../../db/schema";
import { controlAuth, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { activityInsert, companyForActor, controlContext, requireBoard, requireOwner } from "../shared";
import {
  DEFAULT_DAILY_SEND_CAP,
  DEFAULT_POLICY,
  GOVERNED_TOOLS,
  mcpSettingsOf,
  saveMcpSettings,
} from "./store";

/**
 * The board's policy for its agents' WhatsApp sends through MCP: per tool `allowed`, `ask_first` (a
 * board approval per send) or `off`, and the daily cap per agent (docs/mcp.md "Governance").
 */
export const policyRoutes = createRouter();
const tags = ["Companies"];

const CompanyParamSchema = z.object({ companyId: z.string().min(1).max(100) });
const Setting = z.enum([...MCP_TOOL_POLICIES, DEFAULT_POLICY]).openapi({
  description:
    "`allowed`: sent at once; `ask_first`: each send waits for a board approval; `off`: refused; " +
    "`default`: ask_first when the recipient never wrote to the line first, allowed otherwise",
});
const toolShape = Object.fromEntries(GOVERNED_TOOLS.map((tool) => [tool, Setting])) as Record<
  (typeof GOVERNED_TOOLS)[number],
  typeof Setting
>;

const PolicySchema = z
  .object({
    policies: z.object(toolShape),
    dailySendCap: z.number().int().openapi({ description: "WhatsApp sends per agent per UTC day" }),
    dailySendCapIsDefault: z.boolean(),
  })
  .openapi("McpPolicy");

const PutPolicyBodySchema = z
  .strictObject({
    policies: z.strictObject(toolShape).partial().optional(),
    dailySendCap: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .nullable()
      .optional()
      .openapi({ description: `null restores the default (${DEFAULT_DAILY_SEND_CAP}); 0 stops all sends` }),
  })
  .openapi("McpPolicyBody");

policyRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/mcp-policy",
    tags,
    summary: "The board's policy for agents' WhatsApp sends through MCP",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: {
      200: json(PolicySchema, "Every governed tool's setting and the daily cap"),
      ...controlErrors,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    return c.json(await mcpSettingsOf(db, company.id), 200);
  },
);

policyRoutes.openapi(
  createRoute({
    method: "put",
    path: "/companies/{companyId}/mcp-policy",
    tags,
    summary: "Change the policy for agents' WhatsApp sends (owners only)",
    description: "Only the named tools change; a tool set to `default` goes back to the default.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(PutPolicyBodySchema) },
    responses: { 200: json(PolicySchema, "The policy after the change"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "change the MCP policy");
    await requireOwner(db, actor, company.id, "change the MCP policy");
    const change = c.req.valid("json");
    await saveMcpSettings(db, company.id, actor.userId, change);
    await activityInsert(db, {
      companyId: company.id,
      actor: refOf(actor),
      action: "company.mcp_policy_updated",
      entityType: "company",
      entityId: company.id,
      details: { ...change },
    });
    return c.json(await mcpSettingsOf(db, company.id), 200);
  },
);
