import { z } from "@hono/zod-openapi";
import { BRIDGE_ID_PATTERN } from "./store";

/** Request and response shapes of the bridge credential routes (routes.ts). */

export const BridgeIdSchema = z
  .string()
  .regex(BRIDGE_ID_PATTERN, "1-64 letters, digits, '_', '.', ':' or '-'")
  .openapi({ description: "The bridge's BRIDGE_ID", example: "bridge-eu-1" });

export const BridgeParamSchema = z.object({ id: BridgeIdSchema });

export const CreateBridgeBodySchema = z.strictObject({ id: BridgeIdSchema }).openapi("CreateBridgeBody");

export const BridgeSchema = z
  .object({
    id: z.string(),
    tokenPrefix: z.string().openapi({ description: "The first characters of its credential" }),
    createdAt: z.string(),
    lastUsedAt: z
      .string()
      .nullable()
      .openapi({ description: "Last dial with the credential (to the minute)" }),
    revokedAt: z.string().nullable(),
    connected: z.boolean().openapi({ description: "Its fleet link is open and it spoke within 45 s" }),
    sessions: z.number().int().openapi({ description: "Sessions assigned to it" }),
  })
  .openapi("Bridge");

export const CreatedBridgeSchema = z
  .object({
    bridge: BridgeSchema,
    token: z.string().openapi({
      description:
        "Shown once: the bridge presents it as BRIDGE_TOKEN with BRIDGE_ID set to this id. Only its " +
        "SHA-256 is kept.",
    }),
  })
  .openapi("CreatedBridge");
