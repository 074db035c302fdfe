import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../db/client";
import { ok } from "../http/envelope";
import { conflict, conflictOnDuplicate, notFound } from "../http/errors";
import {
  authenticated,
  createRouter,
  errorResponse,
  gatewayErrors,
  gatewayOk,
  json,
  jsonBody,
} from "../http/openapi";
import { agentCredentialsChanged } from "./agent-key-store";
import { credentialsChanged } from "./api-key-store";
import { requireRole } from "./middleware";
import { CreateUserBodySchema, PatchUserBodySchema, UserIdParamsSchema, UserSchema } from "./schemas";
import { deleteUser, insertUser, listUsers, patchUser, toUserResource } from "./user-store";

/** User management: SUPERADMIN only (others 403). */
export const userRoutes = createRouter();
userRoutes.use("*", requireRole("SUPERADMIN"));

const tags = ["Users"];
const userNotFound = () => notFound("User not found");
const DUPLICATE_EMAIL = "A user with this e-mail already exists";
const lastSuperadmin = () => conflict("The last SUPERADMIN cannot be deleted or demoted");

userRoutes.openapi(
  createRoute({
    method: "get",
    path: "/",
    tags,
    summary: "List users",
    security: authenticated,
    responses: { 200: json(gatewayOk(z.array(UserSchema)), "All users"), ...gatewayErrors },
  }),
  async (c) => {
    const rows = await listUsers(database(c.env.DB));
    return c.json(ok("Users retrieved", rows.map(toUserResource)), 200);
  },
);

userRoutes.openapi(
  createRoute({
    method: "post",
    path: "/",
    tags,
    summary: "Create a user",
    security: authenticated,
    request: jsonBody(CreateUserBodySchema),
    responses: {
      201: json(gatewayOk(UserSchema), "Created"),
      ...gatewayErrors,
      409: errorResponse("E-mail already in use"),
    },
  }),
  async (c) => {
    const row = await conflictOnDuplicate(
      insertUser(database(c.env.DB), c.req.valid("json")),
      DUPLICATE_EMAIL,
    );
    return c.json(ok("User created", toUserResource(row)), 201);
  },
);

userRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/{id}",
    tags,
    summary: "Update a user",
    description: "Changing the password signs the user out of every browser session.",
    security: authenticated,
    request: { params: UserIdParamsSchema, ...jsonBody(PatchUserBodySchema) },
    responses: {
      200: json(gatewayOk(UserSchema), "Updated"),
      ...gatewayErrors,
      404: errorResponse("User not found"),
      409: errorResponse("E-mail already in use, or the last SUPERADMIN would be demoted"),
    },
  }),
  async (c) => {
    const outcome = await conflictOnDuplicate(
      patchUser(database(c.env.DB), c.req.valid("param").id, c.req.valid("json")),
      DUPLICATE_EMAIL,
    );
    if (outcome.kind === "not_found") throw userNotFound();
    if (outcome.kind === "last_superadmin") throw lastSuperadmin();
    await credentialsChanged(c.env, outcome.row.id);
    return c.json(ok("User updated", toUserResource(outcome.row)), 200);
  },
);

userRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{id}",
    tags,
    summary: "Delete a user with their sessions and API key; the agent keys they minted are revoked",
    security: authenticated,
    request: { params: UserIdParamsSchema },
    responses: {
      200: json(gatewayOk(z.null()), "Deleted"),
      ...gatewayErrors,
      404: errorResponse("User not found"),
      409: errorResponse("The last SUPERADMIN cannot be deleted"),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const outcome = await deleteUser(database(c.env.DB), id);
    if (outcome.kind === "not_found") throw userNotFound();
    if (outcome.kind === "last_superadmin") throw lastSuperadmin();
    await credentialsChanged(c.env, id);
    for (const agentId of outcome.agentIds) await agentCredentialsChanged(c.env, agentId);
    return c.json(ok("User deleted", null), 200);
  },
);
