import { sql } from "drizzle-orm";
import { randomBytes, toHex } from "../../auth/crypto";
import { seal } from "../../auth/secret-box";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  agents,
  goals,
  issueComments,
  issueDocumentRevisions,
  issueDocuments,
  issueLabels,
  labels,
  projectGoals,
  projects,
  projectWorkspaces,
  type RoutineTriggerRow,
  routines,
  routineTriggers,
} from "../../db/schema";
import type { Statement } from "../issues";
import { numberedIssueStatements } from "../issues";
import { DEFAULT_REPLAY_WINDOW_SEC, firstTick } from "../routines";
import { activityInsert } from "../shared";
import type { PackageModel, PkgRoutine, PkgTask, PkgTrigger } from "./model";
import type { ImportPlan, PlanEntry } from "./plan";

/**
 * The insert statements of an import, in foreign-key order (agents and goals before the projects and
 * routines that point at them), each entity with its activity row. Nothing here executes.
 */

type SlugIds = Map<string, string>;
export interface IdMaps {
  agents: SlugIds;
  goals: SlugIds;
  projects: SlugIds;
  tasks: SlugIds;
}

export interface RowContext {
  db: Db;
  companyId: string;
  actor: ActorRef;
  now: number;
  masterKey: string | undefined;
  ids: IdMaps;
}

/** Slug → id: fresh ids for created rows, the existing row's id for skipped ones. */
export function idMap(entries: PlanEntry[], existing: Map<string, string>): SlugIds {
  return new Map(
    entries.map((entry) => [
      entry.slug,
      entry.action === "skip" ? (existing.get(entry.name.toLowerCase()) ?? newId()) : newId(),
    ]),
  );
}

const finalName = (entry: PlanEntry) => entry.as ?? entry.name;
const created = (entries: PlanEntry[]) => entries.filter((entry) => entry.action !== "skip");
const idOf = (map: SlugIds, slug: string | null) => (slug === null ? null : (map.get(slug) ?? null));

function activity(
  ctx: RowContext,
  action: string,
  entityType: string,
  entityId: string,
  name: string,
): Statement {
  return activityInsert(
    ctx.db,
    {
      companyId: ctx.companyId,
      actor: ctx.actor,
      action,
      entityType,
      entityId,
      details: { name, source: "import" },
    },
    ctx.now,
  );
}

/**
 * Imported agents start paused (pauseReason "import"): their secrets are not in the package, and a
 * board user resuming them is the review a hire would otherwise get.
 */
export function agentStatements(ctx: RowContext, model: PackageModel, plan: ImportPlan): Statement[] {
  return created(plan.agents).flatMap((entry) => {
    const agent = model.agents.find((item) => item.slug === entry.slug);
    const id = ctx.ids.agents.get(entry.slug) ?? newId();
    if (!agent) return [];
    const name = finalName(entry);
    const adapterConfig = agent.instructions
      ? { ...agent.adapterConfig, promptTemplate: agent.instructions }
      : agent.adapterConfig;
    return [
      ctx.db.insert(agents).values({
        id,
        companyId: ctx.companyId,
        name,
        nameKey: name.toLowerCase(),
        role: agent.role,
        title: agent.title,
        icon: agent.icon,
        status: "paused",
        pauseReason: "import",
        reportsTo: idOf(ctx.ids.agents, agent.reportsTo),
        capabilities: agent.capabilities,
        adapterType: agent.adapterType,
        adapterConfig,
        runtimeConfig: agent.runtimeConfig,
        desiredSkills: agent.desiredSkills,
        budgetMonthlyCents: agent.budgetMonthlyCents,
        sourceIssueIds: [],
        createdAt: ctx.now,
        updatedAt: ctx.now,
      }),
      activity(ctx, "agent.created", "agent", id, name),
    ];
  });
}

export function goalStatements(ctx: RowContext, model: PackageModel, plan: ImportPlan): Statement[] {
  return created(plan.goals).flatMap((entry) => {
    const goal = model.goals.find((item) => item.slug === entry.slug);
    const id = ctx.ids.goals.get(entry.slug) ?? newId();
    if (!goal) return [];
    return [
      ctx.db.insert(goals).values({
        id,
        companyId: ctx.companyId,
        title: finalName(entry),
        description: goal.description,
        level: goal.level,
        status: goal.status,
        parentId: idOf(ctx.ids.goals, goal.parent),
        ownerAgentId: idOf(ctx.ids.agents, goal.owner),
        createdAt: ctx.now,
        updatedAt: ctx.now,
      }),
      activity(ctx, "goal.created", "goal", id, finalName(entry)),
    ];
  });
}

export function projectStatements(ctx: RowContext, model: PackageModel, plan: ImportPlan): Statement[] {
  return created(plan.projects).flatMap((entry) => {
    const project = model.projects.find((item) => item.slug === entry.slug);
    const id = ctx.ids.projects.get(entry.slug) ?? newId();
    if (!project) return [];
    const goalIds = [
      ...new Set(project.goals.map((slug) => ctx.ids.goals.get(slug)).filter((g): g is string => !!g)),
    ];
    return [
      ctx.db.insert(projects).values({
        id,
        companyId: ctx.companyId,
        name: finalName(entry),
        description: project.description,
        status: project.status,
        goalId: goalIds[0] ?? null,
        leadAgentId: idOf(ctx.ids.agents, project.lead),
        createdAt: ctx.now,
        updatedAt: ctx.now,
      }),
      ...goalIds.map((goalId) =>
        ctx.db.insert(projectGoals).values({ projectId: id, goalId, companyId: ctx.companyId }),
      ),
      ...project.workspaces.map((space, index) =>
        ctx.db.insert(projectWorkspaces).values({
          id: newId(),
          companyId: ctx.companyId,
          projectId: id,
          ...space,
          // Keeps the export order (oldest first) when the workspaces are read back.
          createdAt: ctx.now + index,
          updatedAt: ctx.now + index,
        }),
      ),
      activity(ctx, "project.created", "project", id, finalName(entry)),
    ];
  });
}

/** A trigger row; webhooks get a fresh public id and signing secret (the receiver rotates to read it). */
async function triggerRow(
  ctx: RowContext,
  routineId: string,
  trigger: PkgTrigger,
  index: number,
): Promise<RoutineTriggerRow> {
  const row: RoutineTriggerRow = {
    id: newId(),
    companyId: ctx.companyId,
    routineId,
    kind: trigger.kind,
    label: trigger.label ?? null,
    enabled: trigger.enabled ?? true,
    cronExpression: null,
    timezone: null,
    nextRunAt: null,
    lastFiredAt: null,
    publicId: null,
    secretCiphertext: null,
    replayWindowSec: null,
    createdAt: ctx.now + index,
    updatedAt: ctx.now + index,
  };
  if (trigger.kind === "schedule") {
    row.cronExpression = trigger.cronExpression.trim().split(/\s+/).join(" ");
    row.timezone = trigger.timezone ?? "UTC";
    row.nextRunAt = firstTick(row.cronExpression, row.timezone, ctx.now);
  } else if (trigger.kind === "webhook") {
    row.publicId = toHex(randomBytes(12));
    row.secretCiphertext = await seal(ctx.masterKey, toHex(randomBytes(24)), row.id);
    row.replayWindowSec = trigger.replayWindowSec ?? DEFAULT_REPLAY_WINDOW_SEC;
  }
  return row;
}

async function routineStatementsOf(ctx: RowContext, routine: PkgRoutine, entry: PlanEntry, index: number) {
  const id = newId();
  const assigneeAgentId = idOf(ctx.ids.agents, routine.assignee) ?? "";
  const projectId = idOf(ctx.ids.projects, routine.project) ?? "";
  const triggers = await Promise.all(routine.triggers.map((trigger, i) => triggerRow(ctx, id, trigger, i)));
  return [
    ctx.db.insert(routines).values({
      id,
      companyId: ctx.companyId,
      title: finalName(entry),
      description: routine.description,
      assigneeAgentId,
      projectId,
      priority: routine.priority,
      status: routine.status,
      concurrencyPolicy: routine.concurrencyPolicy,
      catchUpPolicy: routine.catchUpPolicy,
      ...(ctx.actor.type === "board"
        ? { createdByUserId: ctx.actor.userId }
        : { createdByAgentId: ctx.actor.agentId }),
      createdAt: ctx.now + index,
      updatedAt: ctx.now + index,
    }),
    ...triggers.map((row) => ctx.db.insert(routineTriggers).values(row)),
    activity(ctx, "routine.created", "routine", id, finalName(entry)),
  ];
}

export async function routineStatements(
  ctx: RowContext,
  model: PackageModel,
  plan: ImportPlan,
): Promise<Statement[]> {
  const out: Statement[] = [];
  for (const [index, entry] of created(plan.routines).entries()) {
    const routine = model.routines.find((item) => item.slug === entry.slug);
    if (routine) out.push(...(await routineStatementsOf(ctx, routine, entry, index)));
  }
  return out;
}

/**
 * A task's labels by name: the company's label of that name (names are unique per company, any case),
 * made first when it has none, so an import never duplicates a label the company already has.
 */
function taskLabelStatements(ctx: RowContext, names: string[], issueId: string, at: number): Statement[] {
  const { db, companyId } = ctx;
  const sameName = (name: string) =>
    sql`${labels.companyId} = ${companyId} AND lower(${labels.name}) = lower(${name})`;
  return [...new Set(names)].flatMap((name) => [
    db
      .insert(labels)
      .select(
        sql`SELECT ${newId()}, ${companyId}, ${name}, NULL, ${at} WHERE NOT EXISTS (SELECT 1 FROM ${labels} WHERE ${sameName(name)})`,
      ),
    db
      .insert(issueLabels)
      .select(
        sql`SELECT ${issueId}, ${labels.id}, ${companyId} FROM ${labels} WHERE ${sameName(name)} LIMIT 1`,
      )
      .onConflictDoNothing(),
  ]);
}

function taskExtras(ctx: RowContext, task: PkgTask, issueId: string, at: number): Statement[] {
  const comments = task.comments.map((comment, index) => {
    const agentId = comment.author === "board" ? null : idOf(ctx.ids.agents, comment.author);
    const userId = comment.author === "board" && ctx.actor.type === "board" ? ctx.actor.userId : null;
    return ctx.db.insert(issueComments).values({
      id: newId(),
      companyId: ctx.companyId,
      issueId,
      authorAgentId: agentId,
      authorUserId: userId,
      body: comment.body,
      createdAt: at + index,
      updatedAt: at + index,
    });
  });
  const documents = task.documents.flatMap((document) => {
    const documentId = newId();
    const revisionId = newId();
    const common = { companyId: ctx.companyId, issueId, title: document.title, createdAt: at };
    return [
      ctx.db.insert(issueDocuments).values({
        ...common,
        id: documentId,
        key: document.key,
        format: "markdown",
        latestBody: document.body,
        latestRevisionId: revisionId,
        latestRevisionNumber: 1,
        updatedAt: at,
      }),
      ctx.db.insert(issueDocumentRevisions).values({
        ...common,
        id: revisionId,
        documentId,
        revisionNumber: 1,
        body: document.body,
        changeSummary: "Imported",
      }),
    ];
  });
  return [...comments, ...documents];
}

/** Issues are numbered by the target company's counter, in package order, like any new issue. */
export function taskStatements(ctx: RowContext, model: PackageModel, plan: ImportPlan): Statement[] {
  return created(plan.issues).flatMap((entry, index) => {
    const task = model.tasks.find((item) => item.slug === entry.slug);
    const id = ctx.ids.tasks.get(entry.slug) ?? newId();
    if (!task) return [];
    const at = ctx.now + index;
    const body = {
      title: finalName(entry),
      description: task.description,
      priority: task.priority,
      parentId: idOf(ctx.ids.tasks, task.parent),
      projectId: idOf(ctx.ids.projects, task.project),
      goalId: idOf(ctx.ids.goals, task.goal),
      assigneeAgentId: idOf(ctx.ids.agents, task.assignee),
      dueDate: task.dueDate,
    };
    const issue = {
      id,
      company: { id: ctx.companyId },
      body,
      status: task.status,
      actor: ctx.actor,
      now: at,
    };
    return [
      ...numberedIssueStatements(ctx.db, issue),
      ...taskExtras(ctx, task, id, at),
      ...taskLabelStatements(ctx, task.labels, id, at),
      activity(ctx, "issue.created", "issue", id, finalName(entry)),
    ];
  });
}
