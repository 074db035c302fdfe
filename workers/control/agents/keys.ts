import { createRoute, z } from "@hono/zod-openapi";
import { and, desc, eq } from "drizzle-orm";
import { generateAgentKey } from "../../auth/agent-key-format";
import { agentCredentialsChanged } from "../../auth/agent-key-store";
import { authorColumns, refOf } from "../../core/actor";
import { newId } from "../../db/client";
import { agentApiKeys } from "../../db/schema";
import { notFound, unauthorized } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json } from "../../http/openapi";
import { activityInsert, controlContext } from "../shared";
import { type KeyMinter, type KeyRow, keysWithMinters, minterOf } from "./key-minters";
import { AgentKeySchema, AgentParamSchema, CreatedAgentKeySchema } from "./schemas";
import { agentWithCompany, authorize, commit, requireOwnerToSteerCeo } from "./store";

/** Long-lived agent keys: created (shown once), listed as metadata, revoked. */
export const agentKeyRoutes = createRouter();
const tags = ["Agents"];
const WHO = ["self", "ancestor"] as const;

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Key metadata and who minted it: never the key, never its hash. */
const keyResource = (row: KeyRow, minter: KeyMinter) => ({
  id: row.id,
  agentId: row.agentId,
  name: row.name,
  displayPrefix: row.displayPrefix,
  lastUsedAt: isoOrNull(row.lastUsedAt),
  revokedAt: isoOrNull(row.revokedAt),
  createdAt: new Date(row.createdAt).toISOString(),
  createdBy: minter,
});

const CreateKeySchema = z.strictObject({
  name: z.string().trim().min(1).max(100).optional().openapi({ description: 'Label; default "default"' }),
});

agentKeyRoutes.openapi(
  createRoute({
    method: "post",
    path: "/agents/{agentId}/keys",
    tags,
    summary:
      "Create a long-lived agent key; the full value is shown once (board, the agent, a manager above it)",
    description:
      "Send it as `Authorization: Bearer <token>`. Only its SHA-256 is stored. Keys for the CEO agent: " +
      "owners only among board users (403 for members). An agent that is " +
      "pending_approval or terminated cannot have keys: 401, whoever asks. The body is optional.",
    security: controlAuth,
    request: {
      params: AgentParamSchema,
      body: { content: { "application/json": { schema: CreateKeySchema } }, required: false },
    },
    responses: {
      201: json(CreatedAgentKeySchema, "The key, with its token (shown only here)"),
      ...controlErrors,
      401: controlError("Missing credentials, or the agent is pending_approval or terminated"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { agent, byId } = await agentWithCompany(db, actor, c.req.valid("param").agentId);
    if (agent.status === "pending_approval" || agent.status === "terminated")
      throw unauthorized(`Agent is ${agent.status} and cannot create or use keys`);
    authorize(actor, agent, byId, WHO, "create keys for this agent");
    if (agent.role === "ceo")
      await requireOwnerToSteerCeo(db, actor, agent.companyId, "mint keys for the CEO agent");
    const body = c.req.valid("json");
    const generated = await generateAgentKey(agent.id);
    const now = Date.now();
    const author = authorColumns(refOf(actor));
    const row: KeyRow = {
      id: newId(),
      agentId: agent.id,
      companyId: agent.companyId,
      name: body.name ?? "default",
      keyHash: generated.hash,
      displayPrefix: generated.displayPrefix,
      createdByUserId: author.userId,
      createdByAgentId: author.agentId,
      lastUsedAt: null,
      revokedAt: null,
      runId: null,
      createdAt: now,
    };
    await commit(db, [
      db.insert(agentApiKeys).values(row),
      activityInsert(
        db,
        {
          companyId: agent.companyId,
          actor: refOf(actor),
          action: "agent.key_created",
          entityType: "agent",
          entityId: agent.id,
          details: { keyId: row.id, name: row.name },
        },
        now,
      ),
    ]);
    const minter = minterOf(
      row,
      actor.type === "board"
        ? { name: actor.user.name, email: actor.user.email }
        : { name: byId.get(actor.agentId)?.name ?? null, email: null },
    );
    return c.json({ ...keyResource(row, minter), token: generated.key }, 201);
  },
);

agentKeyRoutes.openapi(
  createRoute({
    method: "get",
    path: "/agents/{agentId}/keys",
    tags,
    summary:
      "List an agent's keys, newest first: metadata and who minted each (board, the agent, a manager above it)",
    security: controlAuth,
    request: { params: AgentParamSchema },
    responses: { 200: json(z.array(AgentKeySchema), "Keys, revoked ones included"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { agent, byId } = await agentWithCompany(db, actor, c.req.valid("param").agentId);
    authorize(actor, agent, byId, WHO, "list this agent's keys");
    const keys = await keysWithMinters(db, eq(agentApiKeys.agentId, agent.id), desc(agentApiKeys.createdAt));
    return c.json(
      keys.map(({ row, minter }) => keyResource(row, minter)),
      200,
    );
  },
);

agentKeyRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/agents/{agentId}/keys/{keyId}",
    tags,
    summary: "Revoke an agent key (board, the agent, a manager above it); revoking twice changes nothing",
    security: controlAuth,
    request: { params: AgentParamSchema.extend({ keyId: z.string().min(1).max(64) }) },
    responses: { 200: json(AgentKeySchema, "The revoked key"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const params = c.req.valid("param");
    const { agent, byId } = await agentWithCompany(db, actor, params.agentId);
    authorize(actor, agent, byId, WHO, "revoke this agent's keys");
    const [found] = await keysWithMinters(
      db,
      and(eq(agentApiKeys.id, params.keyId), eq(agentApiKeys.agentId, agent.id)),
      desc(agentApiKeys.createdAt),
    );
    if (!found) throw notFound("Key not found");
    const { row: key, minter } = found;
    if (key.revokedAt !== null) return c.json(keyResource(key, minter), 200);
    const now = Date.now();
    await commit(db, [
      db.update(agentApiKeys).set({ revokedAt: now }).where(eq(agentApiKeys.id, key.id)),
      activityInsert(
        db,
        {
          companyId: agent.companyId,
          actor: refOf(actor),
          action: "agent.key_revoked",
          entityType: "agent",
          entityId: agent.id,
          details: { keyId: key.id, name: key.name },
        },
        now,
      ),
    ]);
    await agentCredentialsChanged(c.env, agent.id);
    return c.json(keyResource({ ...key, revokedAt: now }, minter), 200);
  },
);
