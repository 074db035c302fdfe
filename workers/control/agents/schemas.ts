import { z } from "@hono/zod-openapi";
import {
  ADAPTER_TYPES,
  AGENT_ROLES,
  AGENT_STATUSES,
  APPROVAL_STATUSES,
  APPROVAL_TYPES,
} from "../../db/schema";
import { nullableRef } from "../../http/openapi";

/** Request and response shapes of the agent routes (routes.ts and its agent-*.ts sub-routers). */

export const JsonObjectSchema = z.record(z.string(), z.unknown());
const NullableText = (max: number) => z.string().trim().max(max).nullable();

export const AgentParamSchema = z.object({ agentId: z.string().min(1).max(200) });
export const CompanyParamSchema = z.object({ companyId: z.string().min(1).max(200) });

const AgentNameSchema = z
  .string()
  .trim()
  .min(1, "name is required")
  .max(100)
  // A name is matched by @-mentions inside comment text: control characters would never match.
  .refine((name) => !/\p{Cc}/u.test(name), "name must not contain control characters");

/** Adapter settings. The keys the spec names are typed; adapters may carry further keys. */
export const AdapterConfigSchema = z
  .object({
    cwd: z.string().max(1024).optional(),
    model: z.string().max(200).optional(),
    promptTemplate: z.string().max(100_000).optional(),
    instructionsFilePath: z.string().max(4096).optional(),
    command: z.string().max(1024).optional(),
    args: z.array(z.string().max(4096)).max(200).optional(),
    env: JsonObjectSchema.optional(),
    workspaceStrategy: z.enum(["worktree", "shared"]).optional().openapi({
      description:
        "In a git workspace: worktree (default) gives each issue its own worktree and branch; shared runs in the workspace itself",
    }),
  })
  .catchall(z.unknown())
  .openapi({ description: "Adapter settings (cwd, model, promptTemplate, instructionsFilePath, env, …)" });

const HeartbeatConfigSchema = z
  .object({
    enabled: z.boolean().optional(),
    intervalSec: z
      .number()
      .int()
      .min(0)
      .max(31 * 86_400)
      .optional(),
    wakeOnDemand: z.boolean().optional(),
  })
  .catchall(z.unknown());

export const RuntimeConfigSchema = z
  .object({
    heartbeat: HeartbeatConfigSchema.optional(),
    maxConcurrentRuns: z
      .number()
      .int()
      .min(1)
      .max(16)
      .optional()
      .openapi({ description: "Runs of this agent at once (default 1): a further wake waits queued" }),
  })
  .catchall(z.unknown())
  .openapi({ description: "heartbeat {enabled, intervalSec, wakeOnDemand}, maxConcurrentRuns" });

export const SkillRefsSchema = z
  .array(z.string().trim().min(1).max(200))
  .max(100)
  .openapi({ description: "Company skill ids, canonical keys (`company/review`) or a unique slug" });

const IssueIdSchema = z.string().min(1).max(64);

/** Fields an agent's owner may change later (PATCH) — also the core of the create shape. */
const agentFields = {
  name: AgentNameSchema,
  role: z.enum(AGENT_ROLES),
  title: NullableText(200).optional(),
  icon: NullableText(64).optional(),
  reportsTo: z.string().min(1).max(64).nullable().optional(),
  capabilities: NullableText(10_000).optional(),
  adapterType: z.enum(ADAPTER_TYPES),
  adapterConfig: AdapterConfigSchema.optional(),
  runtimeConfig: RuntimeConfigSchema.optional(),
  budgetMonthlyCents: z.number().int().min(0).max(1_000_000_000).optional(),
  desiredSkills: SkillRefsSchema.optional(),
};

export const AgentCreateSchema = z
  .strictObject({
    ...agentFields,
    role: agentFields.role.default("general"),
    sourceIssueId: IssueIdSchema.nullable().optional(),
    sourceIssueIds: z.array(IssueIdSchema).max(100).optional(),
  })
  .openapi("AgentCreate");
export type AgentCreateInput = z.infer<typeof AgentCreateSchema>;

export const AgentPatchSchema = z
  .strictObject({
    ...agentFields,
    name: agentFields.name.optional(),
    role: agentFields.role.optional(),
    adapterType: agentFields.adapterType.optional(),
  })
  .openapi("AgentPatch");
export type AgentPatchInput = z.infer<typeof AgentPatchSchema>;

export const AgentSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    name: z.string(),
    role: z.enum(AGENT_ROLES),
    title: z.string().nullable(),
    icon: z.string().nullable(),
    status: z.enum(AGENT_STATUSES),
    pauseReason: z.string().nullable(),
    reportsTo: z.string().nullable(),
    capabilities: z.string().nullable(),
    adapterType: z.enum(ADAPTER_TYPES),
    adapterConfig: JsonObjectSchema.openapi({ description: "Obvious secrets redacted" }),
    runtimeConfig: JsonObjectSchema,
    desiredSkills: z.array(z.string()),
    budgetMonthlyCents: z.number().int(),
    spentMonthlyCents: z.number().int(),
    sourceIssueId: z.string().nullable(),
    sourceIssueIds: z.array(z.string()),
    lastHeartbeatAt: z.string().nullable(),
    terminatedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Agent");

export const ChainLinkSchema = z.object({
  id: z.string(),
  name: z.string(),
  role: z.enum(AGENT_ROLES),
  title: z.string().nullable(),
});

export const AgentDetailSchema = AgentSchema.extend({
  chainOfCommand: z.array(ChainLinkSchema).openapi({ description: "Nearest manager first, up to the CEO" }),
}).openapi("AgentDetail");

export const ApprovalSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    type: z.enum(APPROVAL_TYPES),
    status: z.enum(APPROVAL_STATUSES),
    payload: JsonObjectSchema,
    requestedByAgentId: z.string().nullable(),
    requestedByUserId: z.string().nullable(),
    requestedByName: z
      .string()
      .nullable()
      .openapi({ description: "Display name of the requesting agent or user" }),
    decisionNote: z.string().nullable(),
    decidedByUserId: z.string().nullable(),
    decidedByName: z.string().nullable().openapi({ description: "Display name of the deciding board user" }),
    decidedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  // Not registered as a component: the approvals module owns the name "Approval".
  .openapi({ description: "The hire_agent approval (same shape as the approvals API)" });

export const HireResultSchema = z
  .object({ agent: AgentSchema, approval: ApprovalSchema.nullable() })
  .openapi("AgentHireResult");

export const OrgNodeSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    role: z.enum(AGENT_ROLES),
    title: z.string().nullable(),
    status: z.enum(AGENT_STATUSES),
    reports: z.array(z.unknown()).openapi({ description: "Direct reports, each an OrgNode" }),
  })
  .openapi("OrgNode");

export const ConfigRevisionSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    agentId: z.string(),
    source: z.string(),
    changedKeys: z.array(z.string()),
    beforeConfig: JsonObjectSchema,
    afterConfig: JsonObjectSchema,
    rolledBackFromRevisionId: z.string().nullable(),
    createdByUserId: z.string().nullable(),
    createdByAgentId: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi("AgentConfigRevision");

export const AgentConfigurationSchema = z
  .object({
    agentId: z.string(),
    companyId: z.string(),
    name: z.string(),
    status: z.enum(AGENT_STATUSES),
    adapterType: z.enum(ADAPTER_TYPES),
    adapterConfig: JsonObjectSchema,
    runtimeConfig: JsonObjectSchema,
    desiredSkills: z.array(z.string()),
    instructionsFilePath: z.string().nullable(),
    updatedAt: z.string(),
  })
  .openapi("AgentConfiguration");

export const AgentKeyMinterSchema = z
  .object({
    type: z.enum(["user", "agent"]),
    id: z.string().openapi({ description: "The user's or the agent's id" }),
    name: z.string().nullable().openapi({ description: "As they are called now; null if deleted since" }),
    email: z.string().nullable().openapi({ description: "The user's e-mail; null for an agent" }),
  })
  .openapi("AgentKeyMinter");

export const AgentKeySchema = z
  .object({
    id: z.string(),
    agentId: z.string(),
    name: z.string(),
    displayPrefix: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    createdAt: z.string(),
    createdBy: nullableRef(AgentKeyMinterSchema).openapi({
      description:
        "Who minted the key (a board user or an agent); null for a key the platform minted. Keys a member " +
        "minted are revoked, or re-owned by an owner, when the member leaves the company.",
    }),
  })
  .openapi("AgentKey");

export const CreatedAgentKeySchema = AgentKeySchema.extend({
  token: z.string().openapi({ description: "The full key; shown once, only the SHA-256 is stored" }),
}).openapi("CreatedAgentKey");

export const SkillSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    key: z.string(),
    slug: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    content: z.string().nullable(),
    source: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("CompanySkill");

export const HeartbeatInvokeBodySchema = z
  .strictObject({
    issueId: IssueIdSchema.optional().openapi({
      description:
        "The issue this wake is about (id or identifier, e.g. ACM-12): the run works on it and resumes the agent's CLI session for it",
    }),
  })
  .openapi("HeartbeatInvokeBody");

export const RunSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    agentId: z.string(),
    status: z.string(),
    invocationSource: z.string(),
    requestedByUserId: z
      .string()
      .nullable()
      .openapi({ description: "The board user who invoked it, if one did" }),
    requestedByAgentId: z
      .string()
      .nullable()
      .openapi({ description: "The agent who invoked it, if one did" }),
    requestedByName: z
      .string()
      .nullable()
      .openapi({ description: "Display name of whoever invoked it; null for system wakes (timer, routine)" }),
    wakeReason: z.string(),
    issueId: z.string().nullable(),
    commentId: z.string().nullable(),
    errorReason: z.string().nullable(),
    approvalId: z.string().nullable(),
    approvalStatus: z.string().nullable(),
    routineRunId: z.string().nullable(),
    coalescedCount: z.number().int().openapi({ description: "Further wakes merged into this queued run" }),
    exitCode: z.number().int().nullable(),
    costCents: z.number().int(),
    usage: z.record(z.string(), z.unknown()).nullable(),
    sessionId: z
      .string()
      .nullable()
      .openapi({
        description:
          "The CLI session (Claude, Codex, Gemini, OpenCode) the run ended in, as its runner reported; " +
          "null for adapters without sessions and runs that have not finished",
      }),
    resumed: z.boolean().openapi({
      description:
        "The run resumed the CLI session an earlier run of this agent left on the same issue (false: a fresh session)",
    }),
    runnerId: z.string().nullable().openapi({ description: "The runner that took it" }),
    waitingForRunner: z.boolean().openapi({
      description:
        "Queued, and no connected runner serves its company: it starts when one of the company's owners " +
        "registers and starts a runner (POST /api/companies/{companyId}/runners)",
    }),
    queuePosition: z
      .number()
      .int()
      .nullable()
      .openapi({
        description:
          "Queued: its place in the company's queue, from 1 (the next to start when the company's " +
          "maxConcurrentRuns, its agent and a runner have room); null once it runs or ended",
      }),
    cancelRequestedAt: z
      .string()
      .nullable()
      .openapi({ description: "Someone asked to cancel it while it ran" }),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
  })
  .openapi({ description: "A heartbeat run (runResource)" });
