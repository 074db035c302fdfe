import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, inArray } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { refOf } from "../../core/actor";
import { newId } from "../../db/client";
import { type AgentRow, agents, companySkills } from "../../db/schema";
import { badRequest, forbidden, unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { activityInsert, companyForActor, controlContext } from "../shared";
import { revisionInsert, sameJson } from "./config-store";
import { AgentParamSchema, CompanyParamSchema, SkillRefsSchema, SkillSchema } from "./schemas";
import { DEFAULT_SKILL_NAMESPACE, resolveSkillRefs, skillResource, skillsOf, slugify } from "./skill-store";
import { agentWithCompany, authorize, commit, companyAgents, ensureNotTerminated, isCeo } from "./store";

/** Company skills (list, import) and syncing an agent's desired skills. */
export const agentSkillRoutes = createRouter();
const tags = ["Agents"];
const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;
const NAMESPACE = /^[a-z0-9][a-z0-9_-]{0,63}$/;

agentSkillRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/skills",
    tags,
    summary: "List the company's skills (by canonical key)",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(z.array(SkillSchema), "Skills"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    return c.json((await skillsOf(db, company.id)).map(skillResource), 200);
  },
);

const ImportSkillSchema = z.strictObject({
  slug: z.string().trim().toLowerCase().regex(SLUG, "slug: lower-case letters, digits and dashes").optional(),
  name: z.string().trim().min(1).max(200),
  description: z.string().max(10_000).nullable().optional(),
  content: z.string().max(200_000).nullable().optional(),
  namespace: z
    .string()
    .trim()
    .toLowerCase()
    .regex(NAMESPACE, "namespace: lower-case letters, digits, - and _")
    .optional(),
});

const ImportBodySchema = z
  .strictObject({ skills: z.array(ImportSkillSchema).min(1).max(100) })
  .openapi("SkillImport");

type ImportSkill = z.infer<typeof ImportSkillSchema>;

/** The canonical key and slug of an imported skill; the slug comes from the name when not given. */
function keyOf(skill: ImportSkill): { key: string; slug: string } {
  const slug = skill.slug ?? slugify(skill.name);
  if (!SLUG.test(slug))
    throw unprocessable(`Cannot derive a slug from the name "${skill.name}"; send a slug`);
  return { key: `${skill.namespace ?? DEFAULT_SKILL_NAMESPACE}/${slug}`, slug };
}

agentSkillRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/skills/import",
    tags,
    summary: "Import skills, creating or updating each by canonical key (board users and the CEO)",
    description:
      'Each skill\'s canonical key is `<namespace, default "company">/<slug>`; the slug is derived from the ' +
      "name when absent. An existing key is updated in place (same id). Returns the imported skills.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(ImportBodySchema) },
    responses: {
      201: json(z.array(SkillSchema), "The imported skills"),
      ...controlErrors,
      422: controlError("No usable slug"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    if (actor.type === "agent" && !isCeo(actor, await companyAgents(db, company.id)))
      throw forbidden("Only board users and the CEO may import skills");
    const entries = c.req.valid("json").skills.map((skill) => ({ skill, ...keyOf(skill) }));
    const keys = entries.map((entry) => entry.key);
    const duplicate = keys.find((key, index) => keys.indexOf(key) !== index);
    if (duplicate) throw badRequest(`skills: the key ${duplicate} appears more than once`);
    const existing = await db
      .select()
      .from(companySkills)
      .where(and(eq(companySkills.companyId, company.id), inArray(companySkills.key, keys)));
    const idOf = new Map(existing.map((row) => [row.key, row.id]));
    const now = Date.now();
    const statements: BatchItem<"sqlite">[] = [];
    for (const { skill, key, slug } of entries) {
      const id = idOf.get(key) ?? newId();
      const fields = {
        slug,
        name: skill.name,
        description: skill.description ?? null,
        content: skill.content ?? null,
      };
      statements.push(
        db
          .insert(companySkills)
          .values({
            id,
            companyId: company.id,
            key,
            ...fields,
            source: "import",
            createdAt: now,
            updatedAt: now,
          })
          .onConflictDoUpdate({
            target: [companySkills.companyId, companySkills.key],
            set: { ...fields, updatedAt: now },
          }),
        activityInsert(
          db,
          {
            companyId: company.id,
            actor: refOf(actor),
            action: "skill.imported",
            entityType: "skill",
            entityId: id,
            details: { key, created: !idOf.has(key) },
          },
          now,
        ),
      );
    }
    await commit(db, statements);
    const rows = await db
      .select()
      .from(companySkills)
      .where(and(eq(companySkills.companyId, company.id), inArray(companySkills.key, keys)));
    // In the order they were sent.
    rows.sort((a, b) => keys.indexOf(a.key) - keys.indexOf(b.key));
    return c.json(rows.map(skillResource), 201);
  },
);

const SyncBodySchema = z.strictObject({ desiredSkills: SkillRefsSchema }).openapi("AgentSkillSync");

agentSkillRoutes.openapi(
  createRoute({
    method: "post",
    path: "/agents/{agentId}/skills/sync",
    tags,
    summary: "Set the agent's desired skills (board, the CEO, a manager above it, the agent itself)",
    description:
      "Each entry is a skill id, canonical key or unique slug; they are stored as canonical keys (an " +
      "unknown or ambiguous entry is a 422). A change writes a config revision (source skills_sync).",
    security: controlAuth,
    request: { params: AgentParamSchema, ...jsonBody(SyncBodySchema) },
    responses: {
      200: json(
        z.object({ desiredSkills: z.array(z.string()), skills: z.array(SkillSchema) }),
        "The agent's skills",
      ),
      ...controlErrors,
      422: controlError("Unknown or ambiguous skill, or the agent is terminated"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { agent, byId } = await agentWithCompany(db, actor, c.req.valid("param").agentId);
    authorize(actor, agent, byId, ["self", "ceo", "ancestor"], "change this agent's skills");
    ensureNotTerminated(agent);
    const skills = await resolveSkillRefs(db, agent.companyId, c.req.valid("json").desiredSkills);
    const desiredSkills = skills.map((skill) => skill.key);
    const result = { desiredSkills, skills: skills.map(skillResource) };
    if (sameJson(desiredSkills, agent.desiredSkills)) return c.json(result, 200);
    const now = Date.now();
    const next: AgentRow = { ...agent, desiredSkills, updatedAt: now };
    const ref = refOf(actor);
    await commit(db, [
      db.update(agents).set({ desiredSkills, updatedAt: now }).where(eq(agents.id, agent.id)),
      revisionInsert(
        db,
        {
          agent,
          before: agent,
          after: next,
          changedKeys: ["desiredSkills"],
          source: "skills_sync",
          actor: ref,
        },
        now,
      ),
      activityInsert(
        db,
        {
          companyId: agent.companyId,
          actor: ref,
          action: "agent.skills_synced",
          entityType: "agent",
          entityId: agent.id,
          details: { desiredSkills, previous: agent.desiredSkills },
        },
        now,
      ),
    ]);
    return c.json(result, 200);
  },
);
