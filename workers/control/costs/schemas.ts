import { z } from "@hono/zod-openapi";
import { iso } from "../../db/client";
import { BILLING_TYPES, type CostEventRow } from "../../db/schema";

/** Request and response shapes of the cost routes (routes.ts). */

const TOKENS_MAX = 1_000_000_000_000;
const CENTS_MAX = 100_000_000_000;

const Id = z.string().min(1).max(64);
const Tokens = z.number().int().min(0).max(TOKENS_MAX).default(0);

/** An ISO-8601 instant with a zone (`2025-03-01T12:00:00Z`, `…+02:00`): ambiguous local times are 400. */
const Instant = z.iso.datetime({ offset: true });

export const CostEventBodySchema = z
  .strictObject({
    agentId: Id,
    issueId: Id.nullable().optional().openapi({ description: "The issue's id or identifier (ACM-12)" }),
    projectId: Id.nullable().optional(),
    heartbeatRunId: Id.nullable().optional(),
    provider: z.string().trim().min(1).max(100),
    model: z.string().trim().min(1).max(200).nullable().optional(),
    billingType: z.enum(BILLING_TYPES).default("unknown"),
    inputTokens: Tokens,
    cachedInputTokens: Tokens,
    outputTokens: Tokens,
    costCents: z.number().int().min(0).max(CENTS_MAX),
    occurredAt: Instant,
  })
  .openapi("CostEventBody");

export const CostEventSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    agentId: z.string(),
    issueId: z.string().nullable(),
    projectId: z.string().nullable(),
    heartbeatRunId: z.string().nullable(),
    provider: z.string(),
    model: z.string().nullable(),
    billingType: z.enum(BILLING_TYPES),
    inputTokens: z.number().int(),
    cachedInputTokens: z.number().int(),
    outputTokens: z.number().int(),
    costCents: z.number().int(),
    occurredAt: z.string().openapi({ format: "date-time" }),
    createdByUserId: z.string().nullable(),
    createdByAgentId: z.string().nullable(),
    createdAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("CostEvent");

export const costEventResource = (row: CostEventRow) => ({
  id: row.id,
  companyId: row.companyId,
  agentId: row.agentId,
  issueId: row.issueId,
  projectId: row.projectId,
  heartbeatRunId: row.heartbeatRunId,
  provider: row.provider,
  model: row.model,
  billingType: row.billingType,
  inputTokens: row.inputTokens,
  cachedInputTokens: row.cachedInputTokens,
  outputTokens: row.outputTokens,
  costCents: row.costCents,
  occurredAt: iso(row.occurredAt),
  createdByUserId: row.createdByUserId,
  createdByAgentId: row.createdByAgentId,
  createdAt: iso(row.createdAt),
});

export const CostRangeQuerySchema = z.object({
  from: Instant.optional().openapi({ description: "Inclusive; default the start of the current UTC month" }),
  to: Instant.optional().openapi({ description: "Exclusive; default the start of the next UTC month" }),
});

const RangeFields = {
  from: z.string().openapi({ format: "date-time" }),
  to: z.string().openapi({ format: "date-time" }),
};

export const CostSummarySchema = z
  .object({
    companyId: z.string(),
    spendCents: z.number().int(),
    budgetCents: z.number().int(),
    utilizationPercent: z
      .number()
      .nullable()
      .openapi({ description: "spend / monthly budget × 100, two decimals; null when the budget is 0" }),
    ...RangeFields,
  })
  .openapi("CostSummary");

const UsageFields = {
  costCents: z.number().int(),
  inputTokens: z.number().int(),
  cachedInputTokens: z.number().int(),
  outputTokens: z.number().int(),
  eventCount: z.number().int(),
};

export const AgentCostSchema = z
  .object({ agentId: z.string(), agentName: z.string(), agentStatus: z.string(), ...UsageFields })
  .openapi("AgentCost");

export const ProjectCostSchema = z
  .object({ projectId: z.string().nullable(), projectName: z.string().nullable(), ...UsageFields })
  .openapi("ProjectCost");

export const ModelCostSchema = z
  .object({ provider: z.string(), model: z.string().nullable(), ...UsageFields })
  .openapi("ModelCost");

export const ProviderCostSchema = z.object({ provider: z.string(), ...UsageFields }).openapi("ProviderCost");
