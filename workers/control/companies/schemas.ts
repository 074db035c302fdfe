import { z } from "@hono/zod-openapi";
import { AGENT_STATUSES, COMPANY_STATUSES, ISSUE_STATUSES } from "../../db/schema";

/** Request and response shapes of the company endpoints (routes.ts, logo.ts, dashboard.ts). */

export const CompanyParamSchema = z.object({ companyId: z.string() });
export const AssetParamSchema = CompanyParamSchema.extend({ assetId: z.string() });

const Timestamp = z.string().openapi({ format: "date-time" });
const Cents = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const BrandColor = z
  .string()
  .regex(/^#[0-9A-Fa-f]{6}$/, "brandColor must be a hex colour like #1A2B3C")
  .openapi({ example: "#0F766E" });
const CompanyName = z.string().trim().min(1).max(120);
const Description = z.string().max(5000);

export const CompanySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    status: z.enum(COMPANY_STATUSES),
    issuePrefix: z.string().openapi({ example: "ACM", description: "Immutable; issues are `<PREFIX>-<n>`" }),
    brandColor: z.string().nullable(),
    logoAssetId: z.string().nullable(),
    budgetMonthlyCents: z.number().int(),
    spentMonthlyCents: z.number().int(),
    requireBoardApprovalForNewAgents: z.boolean(),
    maxConcurrentRuns: z.number().int().nullable().openapi({
      description:
        "At most this many of the company's runs execute at once; the rest wait queued, in order (null: no cap)",
    }),
    archivedAt: Timestamp.nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Company");

export const CreateCompanyBodySchema = z
  .strictObject({
    name: CompanyName,
    description: Description.nullable().optional(),
    brandColor: BrandColor.nullable().optional(),
    budgetMonthlyCents: Cents.optional(),
    requireBoardApprovalForNewAgents: z.boolean().optional().openapi({ description: "Default true" }),
  })
  .openapi("CreateCompanyBody");

export const UpdateCompanyBodySchema = z
  .strictObject({
    name: CompanyName.optional(),
    description: Description.nullable().optional(),
    brandColor: BrandColor.nullable().optional(),
    logoAssetId: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: "An asset of this company (POST …/logo), or null" }),
    status: z.enum(COMPANY_STATUSES).optional().openapi({ description: "Board only" }),
    budgetMonthlyCents: Cents.optional().openapi({ description: "Board only" }),
    spentMonthlyCents: Cents.optional().openapi({ description: "Board only" }),
    requireBoardApprovalForNewAgents: z.boolean().optional().openapi({ description: "Board only" }),
    maxConcurrentRuns: z.number().int().min(1).max(256).nullable().optional().openapi({
      description: "Board only: runs executing at once across the company, 1 to 256, or null for no cap",
    }),
    issuePrefix: z.unknown().optional().openapi({ description: "Immutable: present at all answers 422" }),
  })
  .openapi("UpdateCompanyBody");

export type UpdateCompanyBody = z.infer<typeof UpdateCompanyBodySchema>;

export const LogoUploadedSchema = z.object({ assetId: z.string() }).openapi("LogoUploaded");

const countsOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.object(
    Object.fromEntries(values.map((value) => [value, z.number().int()])) as Record<T[number], z.ZodNumber>,
  );

export const DashboardSchema = z
  .object({
    companyId: z.string(),
    agents: z.object({ total: z.number().int(), byStatus: countsOf(AGENT_STATUSES) }),
    issues: z.object({
      total: z.number().int(),
      open: z.number().int().openapi({ description: "Neither done nor cancelled" }),
      byStatus: countsOf(ISSUE_STATUSES),
    }),
    spend: z.object({
      spentMonthlyCents: z.number().int(),
      budgetMonthlyCents: z.number().int(),
      utilizationPercent: z.number().openapi({ description: "0 when there is no budget" }),
    }),
    staleTasks: z.array(
      z.object({
        id: z.string(),
        identifier: z.string(),
        title: z.string(),
        assigneeAgentId: z.string().nullable(),
        updatedAt: Timestamp,
      }),
    ),
    pendingApprovals: z.number().int(),
  })
  .openapi("CompanyDashboard");

/** Date.parse rolls 2026-02-31 over to March; a real date reads back as the same day. */
function isRealDate(text: string): boolean {
  const ms = Date.parse(text);
  return !Number.isNaN(ms) && (text.length > 10 || new Date(ms).toISOString().startsWith(text));
}

/** A day (`2026-01-31`, midnight UTC) or an ISO date-time, as epoch milliseconds. */
const DateBound = (name: string) =>
  z
    .string()
    .regex(
      /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/,
      `${name} must be a date (YYYY-MM-DD) or an ISO date-time`,
    )
    .refine(isRealDate, `${name} is not a real date`)
    .transform((text) => Date.parse(text));

export const ActivityQuerySchema = z.object({
  agentId: z.string().optional(),
  actorType: z
    .enum(["user", "agent", "system"])
    .optional()
    .openapi({ description: "Only entries by board users, agents or the system" }),
  action: z
    .string()
    .max(100)
    .regex(/^[a-z_.]+$/, "action may contain only a-z, _ and . (e.g. agent.updated)")
    .optional()
    .openapi({
      description:
        "Exactly this action (`agent.updated`), or all of an entity's with a trailing dot (`agent.`)",
    }),
  entityType: z.string().optional(),
  entityId: z.string().optional(),
  since: DateBound("since")
    .optional()
    .openapi({ description: "Entries at or after this date or date-time (a date is midnight UTC)" }),
  until: DateBound("until").optional().openapi({ description: "Entries before this date or date-time" }),
  before: z
    .string()
    .max(64)
    .optional()
    .openapi({ description: "An entry's id: only entries older than it (the next page after that entry)" }),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const ActivitySchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    actorType: z.string(),
    actorId: z.string(),
    actorName: z.string().nullable().openapi({
      description: "Display name of the user or agent; null for the system or an account that is gone",
    }),
    action: z.string(),
    entityType: z.string(),
    entityId: z.string(),
    details: z.record(z.string(), z.unknown()),
    createdAt: Timestamp,
  })
  .openapi("Activity");
