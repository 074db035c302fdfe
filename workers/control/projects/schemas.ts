import { z } from "@hono/zod-openapi";
import { PROJECT_STATUSES } from "../../db/schema";
import { nullableRef } from "../../http/openapi";

/** Request and response shapes of projects and their workspaces. */

export const ProjectParamSchema = z.object({ projectId: z.string() });
export const GoalParamSchema = z.object({ goalId: z.string() });
export const WorkspaceParamSchema = ProjectParamSchema.extend({ workspaceId: z.string() });

const Timestamp = z.string().openapi({ format: "date-time" });
const Id = z.string().min(1).max(100);
const ProjectName = z.string().trim().min(1).max(200);
const Description = z.string().max(10_000);
const GoalIds = z
  .array(Id)
  .max(50)
  .openapi({ description: "Goals of the same company; the first is goalId" });

const WorkspaceName = z.string().trim().min(1).max(200);
const Cwd = z.string().trim().min(1).max(1000).openapi({ example: "/srv/app" });
const RepoUrl = z.string().trim().min(1).max(2000).openapi({ example: "https://github.com/acme/app.git" });
const RepoRef = z.string().trim().min(1).max(200).openapi({ example: "main" });

export const WorkspaceSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    projectId: z.string(),
    name: z.string(),
    cwd: z.string().nullable(),
    repoUrl: z.string().nullable(),
    repoRef: z.string().nullable(),
    isPrimary: z.boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("ProjectWorkspace");

export const CreateWorkspaceBodySchema = z
  .strictObject({
    name: WorkspaceName.optional().openapi({ description: "Default: the repository or directory name" }),
    cwd: Cwd.nullable().optional(),
    repoUrl: RepoUrl.nullable().optional(),
    repoRef: RepoRef.nullable().optional(),
    isPrimary: z.boolean().optional().openapi({
      description: "true demotes the current primary; a project's first workspace is always primary",
    }),
  })
  .openapi("CreateProjectWorkspaceBody");

export const UpdateWorkspaceBodySchema = z
  .strictObject({
    name: WorkspaceName.optional(),
    cwd: Cwd.nullable().optional(),
    repoUrl: RepoUrl.nullable().optional(),
    repoRef: RepoRef.nullable().optional(),
    isPrimary: z
      .boolean()
      .optional()
      .openapi({
        description:
          "true makes this the primary workspace (the others are demoted); false on the primary is a 422 " +
          "(promote another one instead)",
      }),
  })
  .openapi("UpdateProjectWorkspaceBody");

export type CreateWorkspaceBody = z.infer<typeof CreateWorkspaceBodySchema>;
export type UpdateWorkspaceBody = z.infer<typeof UpdateWorkspaceBodySchema>;

export const ProjectSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    status: z.enum(PROJECT_STATUSES),
    goalId: z.string().nullable().openapi({ description: "The first of goalIds" }),
    goalIds: z.array(z.string()),
    leadAgentId: z.string().nullable(),
    primaryWorkspace: nullableRef(WorkspaceSchema),
    workspaces: z.array(WorkspaceSchema),
    archivedAt: Timestamp.nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Project");

export const CreateProjectBodySchema = z
  .strictObject({
    name: ProjectName,
    description: Description.nullable().optional(),
    status: z.enum(PROJECT_STATUSES).optional().openapi({ description: "Default active" }),
    goalIds: GoalIds.optional(),
    goalId: Id.nullable().optional().openapi({ description: "Shorthand for goalIds [goalId]" }),
    leadAgentId: Id.nullable().optional(),
    workspace: CreateWorkspaceBodySchema.optional().openapi({ description: "Becomes the primary workspace" }),
  })
  .openapi("CreateProjectBody");

export const UpdateProjectBodySchema = z
  .strictObject({
    name: ProjectName.optional(),
    description: Description.nullable().optional(),
    status: z.enum(PROJECT_STATUSES).optional(),
    goalIds: GoalIds.optional().openapi({ description: "Replaces the project's goals" }),
    goalId: Id.nullable().optional().openapi({ description: "Shorthand for goalIds [goalId] (null: none)" }),
    leadAgentId: Id.nullable().optional(),
  })
  .openapi("UpdateProjectBody");

export type CreateProjectBody = z.infer<typeof CreateProjectBodySchema>;
export type UpdateProjectBody = z.infer<typeof UpdateProjectBodySchema>;
