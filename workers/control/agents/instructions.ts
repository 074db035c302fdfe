import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { refOf } from "../../core/actor";
import { type AgentRow, agents, type JsonObject } from "../../db/schema";
import { unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { activityInsert, controlContext, isSecretKey } from "../shared";
import { DEFAULT_INSTRUCTIONS_KEY, revisionInsert, sameJson } from "./config-store";
import { AgentParamSchema, AgentSchema } from "./schemas";
import { agentResource, agentWithCompany, authorize, commit, ensureNotTerminated } from "./store";

/** PATCH /agents/:id/instructions-path: where the agent's instructions file lives. */
export const agentInstructionsRoutes = createRouter();

/**
 * Keys this endpoint must not write: they steer what the adapter runs or carry secrets, and have
 * their own path (PATCH /agents/:id) with its own permission rule.
 */
const RESERVED_KEYS = new Set(["cwd", "env", "command", "args", "model", "promptTemplate"]);

const InstructionsPathSchema = z
  .strictObject({
    path: z
      .string()
      .trim()
      .min(1)
      .max(4096)
      .refine((path) => !path.includes("\0"), "path must not contain NUL")
      .nullable()
      .openapi({ description: "Absolute (stored as is) or relative to adapterConfig.cwd; null clears" }),
    adapterConfigKey: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, "adapterConfigKey must be a plain identifier")
      .refine((key) => !RESERVED_KEYS.has(key) && !isSecretKey(key), "adapterConfigKey is reserved")
      .optional()
      .openapi({ description: `The adapterConfig key to set; default "${DEFAULT_INSTRUCTIONS_KEY}"` }),
  })
  .openapi("AgentInstructionsPath");

const isAbsolute = (path: string) =>
  path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\\\");

/** POSIX normalisation: `.` and empty segments dropped, `..` removes the previous one (never above /). */
export function normalisePosix(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join("/")}`;
}

/** The path to store: absolute as given; relative joined to the agent's absolute cwd. */
export function resolveInstructionsPath(path: string, adapterConfig: JsonObject): string {
  if (isAbsolute(path)) return path;
  const cwd = adapterConfig.cwd;
  if (typeof cwd !== "string" || cwd.trim() === "")
    throw unprocessable("A relative path needs adapterConfig.cwd; set cwd or send an absolute path");
  if (!cwd.startsWith("/")) throw unprocessable("adapterConfig.cwd is not an absolute POSIX path");
  return normalisePosix(`${cwd}/${path}`);
}

function withPath(config: JsonObject, key: string, path: string | null): JsonObject {
  const next: JsonObject = { ...config };
  if (path === null) delete next[key];
  else next[key] = path;
  return next;
}

agentInstructionsRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/agents/{agentId}/instructions-path",
    tags: ["Agents"],
    summary: "Set or clear the agent's instructions file path (the agent itself, a manager above it, board)",
    description:
      "A relative path resolves against adapterConfig.cwd (422 when there is none) and is normalised; " +
      "an absolute path is stored as is; null removes the key. adapterConfigKey names a non-default key. " +
      "A change writes a config revision (source instructions_path).",
    security: controlAuth,
    request: { params: AgentParamSchema, ...jsonBody(InstructionsPathSchema) },
    responses: {
      200: json(AgentSchema, "The agent; the path is in adapterConfig"),
      ...controlErrors,
      422: controlError("Relative path without cwd, or the agent is terminated"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { agent, byId } = await agentWithCompany(db, actor, c.req.valid("param").agentId);
    authorize(actor, agent, byId, ["self", "ancestor"], "set this agent's instructions path");
    ensureNotTerminated(agent);
    const body = c.req.valid("json");
    const key = body.adapterConfigKey ?? DEFAULT_INSTRUCTIONS_KEY;
    const path = body.path === null ? null : resolveInstructionsPath(body.path, agent.adapterConfig);
    const adapterConfig = withPath(agent.adapterConfig, key, path);
    if (sameJson(adapterConfig, agent.adapterConfig)) return c.json(agentResource(agent), 200);
    const now = Date.now();
    const next: AgentRow = { ...agent, adapterConfig, updatedAt: now };
    const ref = refOf(actor);
    await commit(db, [
      db.update(agents).set({ adapterConfig, updatedAt: now }).where(eq(agents.id, agent.id)),
      revisionInsert(
        db,
        {
          agent,
          before: agent,
          after: next,
          changedKeys: ["adapterConfig"],
          source: "instructions_path",
          actor: ref,
        },
        now,
      ),
      activityInsert(
        db,
        {
          companyId: agent.companyId,
          actor: ref,
          action: "agent.instructions_path_set",
          entityType: "agent",
          entityId: agent.id,
          details: { adapterConfigKey: key, path },
        },
        now,
      ),
    ]);
    return c.json(agentResource(next), 200);
  },
);
