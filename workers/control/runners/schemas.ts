import { z } from "@hono/zod-openapi";

/** Request and response shapes of the runner routes (routes.ts). */

const RunnerName = z.string().trim().min(1).max(100);

export const CompanyParamSchema = z.object({ companyId: z.string() });
export const RunnerParamSchema = z.object({ runnerId: z.uuid() });
export const CompanyRunnerParamSchema = z.object({ companyId: z.string(), runnerId: z.uuid() });

/** How many runs may execute on the runner at once, whatever slots it claims (absent: its slots decide). */
const RunnerCap = z.number().int().min(1).max(256).optional().openapi({
  description: "At most this many runs execute on the runner at once, whatever slots it claims (1 to 256)",
});

export const CreateRunnerBodySchema = z
  .strictObject({
    name: RunnerName,
    companyIds: z
      .array(z.uuid())
      .min(1)
      .max(100)
      .optional()
      .openapi({ description: "Companies it serves; you must be an owner of each" }),
    allCompanies: z
      .boolean()
      .optional()
      .openapi({
        description:
          "Serve every company you created, and each one you create later (instead of companyIds); " +
          "never a company you join by invite unless you attach the runner to it",
      }),
    maxConcurrentRuns: RunnerCap,
  })
  .refine((body) => (body.allCompanies === true) !== (body.companyIds !== undefined), {
    message: "send either companyIds or allCompanies: true",
    path: ["companyIds"],
  })
  .openapi("CreateRunnerBody");

export const CreateCompanyRunnerBodySchema = z
  .strictObject({ name: RunnerName, maxConcurrentRuns: RunnerCap })
  .openapi("CreateCompanyRunnerBody");

export const RunnerSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    ownerUserId: z.string(),
    tokenPrefix: z.string().openapi({ description: "The first characters of its token" }),
    allCompanies: z
      .boolean()
      .openapi({ description: "Each company its owner creates is added to companyIds" }),
    companyIds: z
      .array(z.string())
      .openapi({ description: "The companies it serves (while its owner owns them)" }),
    connected: z.boolean().openapi({ description: "A link is open and the runner spoke in the last 90 s" }),
    capabilities: z.record(z.string(), z.unknown()).nullable(),
    version: z.string().nullable(),
    maxConcurrentRuns: z.number().int().nullable().openapi({
      description: "At most this many runs execute on it at once (null: the slots it claims decide)",
    }),
    lastSeenAt: z.string().nullable(),
    createdAt: z.string(),
    revokedAt: z.string().nullable(),
  })
  .openapi("Runner");

export const CreatedRunnerSchema = z
  .object({
    runner: RunnerSchema,
    token: z.string().openapi({
      description:
        "Shown once: the runner presents it to connect. Give it to the runner on stdin or in the file " +
        "RUNNER_TOKEN_FILE names, never in an environment variable (docs/security.md).",
    }),
  })
  .openapi("CreatedRunner");
