import { createRoute } from "@hono/zod-openapi";
import { BOT_CONFIG_DEFAULTS, BotConfigBodySchema } from "../../../durable-objects/messaging/config/bot";
import { database, newId } from "../../db/client";
import { botConfigs } from "../../db/schema";
import { ok } from "../../http/envelope";
import { authenticated, createRouter, gatewayOk, json, jsonBody } from "../../http/openapi";
import { pushSessionConfig } from "./call";
import { sealRemoveBgKey } from "./remove-bg-key";
import {
  BotConfigSchema,
  SessionIdParamsSchema,
  sessionErrorResponses,
  toBotConfigResource,
} from "./schemas";
import { findBotConfig, loadAccessibleSession } from "./store";

/** Per-session bot configuration. Allow/block lists hold whole JIDs and match whole JIDs only. */
export const botConfigRoutes = createRouter();
const tags = ["Sessions"];
const errors = sessionErrorResponses;

botConfigRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{id}/bot-config",
    tags,
    summary: "The bot configuration (defaults when never set)",
    security: authenticated,
    request: { params: SessionIdParamsSchema },
    responses: { 200: json(gatewayOk(BotConfigSchema), "Bot configuration"), ...errors },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(
      db,
      c.get("principal"),
      c.req.valid("param").id,
      c.req.method === "GET" ? "read" : "operate",
    );
    return c.json(
      ok("Bot config retrieved", toBotConfigResource(session, await findBotConfig(db, session.id))),
      200,
    );
  },
);

botConfigRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{id}/bot-config",
    tags,
    summary: "Set any subset of the bot configuration; omitted fields keep their value",
    description:
      "`removeBgApiKey` is write-only and encrypted at rest: responses show only `removeBgApiKeySet` " +
      "(and `****` in `removeBgApiKey`); null clears it.",
    security: authenticated,
    request: { params: SessionIdParamsSchema, ...jsonBody(BotConfigBodySchema) },
    responses: { 200: json(gatewayOk(BotConfigSchema), "The updated configuration"), ...errors },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(
      db,
      c.get("principal"),
      c.req.valid("param").id,
      c.req.method === "GET" ? "read" : "operate",
    );
    const { removeBgApiKey, ...fields } = c.req.valid("json");
    // Sealed before it is stored; the plaintext goes nowhere else (not to the session's object either).
    const patch = {
      ...fields,
      ...(removeBgApiKey === undefined
        ? {}
        : {
            removeBgApiKey:
              removeBgApiKey === null
                ? null
                : await sealRemoveBgKey(c.env.SECRETS_MASTER_KEY, session.id, removeBgApiKey),
          }),
    };
    const now = Date.now();
    // One upsert: the first write fills defaults, later writes change only what was sent.
    const [row] = await db
      .insert(botConfigs)
      .values({
        ...BOT_CONFIG_DEFAULTS,
        ...patch,
        id: newId(),
        sessionId: session.id,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoUpdate({ target: botConfigs.sessionId, set: { ...patch, updatedAt: now } })
      .returning();
    await pushSessionConfig(c.env, session.id);
    return c.json(ok("Bot config updated", toBotConfigResource(session, row)), 200);
  },
);
