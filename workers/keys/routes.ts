import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  CreateScopedKeyBodySchema,
  ScopedKeyIdParamsSchema,
  ScopedKeySchema,
} from "../auth/scoped-key-schemas";
import {
  createScopedKey,
  listScopedKeys,
  revokeScopedKey,
  type ScopedKeyView,
} from "../auth/scoped-key-store";
import { membershipRole } from "../control/shared";
import type { AppEnv } from "../core/env";
import type { KeyScope } from "../core/scopes";
import { grantExpired } from "../core/scopes";
import { type Db, database } from "../db/client";
import { loadAccessibleSession } from "../gateway/sessions";
import { ok } from "../http/envelope";
import { notFound, unprocessable } from "../http/errors";
import {
  authenticated,
  createRouter,
  errorResponse,
  gatewayErrors,
  gatewayOk,
  json,
  jsonBody,
} from "../http/openapi";

/**
 * The caller's scoped API keys (issue 27): any number besides their one full key (/api/user/api-key),
 * each with scopes, optionally one session or one company, optionally an expiry. Shown once, SHA-256 at
 * rest. Only a cookie, the full key or an unlimited admin key reaches these routes (auth/key-scopes.ts).
 */
export const scopedKeyRoutes = createRouter();
const tags = ["API key"];

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function toScopedKey({ row, sessionSlug }: ScopedKeyView, key: string | null = null) {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes as KeyScope[],
    sessionId: sessionSlug,
    companyId: row.companyId,
    expiresAt: iso(row.expiresAt),
    expired: grantExpired({ scopes: [], sessionId: null, companyId: null, expiresAt: row.expiresAt }),
    keyPrefix: row.displayPrefix,
    last4: row.last4,
    createdAt: new Date(row.createdAt).toISOString(),
    lastUsedAt: iso(row.lastUsedAt),
    key,
  };
}

scopedKeyRoutes.openapi(
  createRoute({
    method: "get",
    path: "/",
    tags,
    summary: "The caller's scoped API keys (never the keys themselves)",
    security: authenticated,
    responses: {
      200: json(gatewayOk(z.array(ScopedKeySchema)), "The keys, oldest first"),
      401: gatewayErrors[401],
      403: gatewayErrors[403],
    },
  }),
  async (c) => {
    const views = await listScopedKeys(database(c.env.DB), c.get("principal").user.id);
    return c.json(
      ok(
        "Scoped API keys",
        views.map((view) => toScopedKey(view)),
      ),
      200,
    );
  },
);

/** The internal id of a session the caller may use; another user's or an unknown one answers 404. */
async function sessionOfCaller(c: Context<AppEnv>, db: Db, idOrSlug: string): Promise<string> {
  const session = await loadAccessibleSession(db, c.get("principal"), idOrSlug, "read");
  return session.id;
}

/** A company the caller is a member of; any other answers 404, as an unknown id. */
async function companyOfCaller(c: Context<AppEnv>, db: Db, companyId: string): Promise<string> {
  const role = await membershipRole(db, c.get("principal").user.id, companyId);
  if (role === null) throw notFound("Company not found");
  return companyId;
}

scopedKeyRoutes.openapi(
  createRoute({
    method: "post",
    path: "/",
    tags,
    summary: "Create a scoped API key",
    description:
      "The full key is in this response only; send it as `X-API-Key` (or `Authorization: Bearer` on /mcp). " +
      "A request outside the key's scopes answers 403 naming the missing scope; a limited key reaches only " +
      "its session or company (others answer 404).",
    security: authenticated,
    request: jsonBody(CreateScopedKeyBodySchema),
    responses: {
      201: json(gatewayOk(ScopedKeySchema), "The new key, shown once"),
      400: gatewayErrors[400],
      401: gatewayErrors[401],
      403: gatewayErrors[403],
      404: errorResponse("The session or company is unknown or not the caller's"),
      422: errorResponse("The expiry is not in the future"),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const db = database(c.env.DB);
    const expiresAt = body.expiresAt === undefined ? null : Date.parse(body.expiresAt);
    if (expiresAt !== null && expiresAt <= Date.now()) throw unprocessable("expiresAt must be in the future");
    const created = await createScopedKey(db, c.get("principal").user.id, {
      name: body.name,
      scopes: body.scopes,
      sessionId: body.sessionId === undefined ? null : await sessionOfCaller(c, db, body.sessionId),
      companyId: body.companyId === undefined ? null : await companyOfCaller(c, db, body.companyId),
      expiresAt,
    });
    return c.json(
      ok("API key created; store it now, it is not shown again", toScopedKey(created.view, created.key)),
      201,
    );
  },
);

scopedKeyRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{keyId}",
    tags,
    summary: "Revoke a scoped API key",
    description: "It stops working at once, and sockets it opened close.",
    security: authenticated,
    request: { params: ScopedKeyIdParamsSchema },
    responses: {
      200: json(gatewayOk(z.object({ id: z.string(), revoked: z.literal(true) })), "Revoked"),
      401: gatewayErrors[401],
      403: gatewayErrors[403],
      404: errorResponse("No such key of the caller's"),
    },
  }),
  async (c) => {
    const { keyId } = c.req.valid("param");
    const revoked = await revokeScopedKey(c.env, database(c.env.DB), c.get("principal").user.id, keyId);
    if (!revoked) throw notFound("API key not found");
    return c.json(ok("API key revoked", { id: keyId, revoked: true as const }), 200);
  },
);
