import { createRoute, z } from "@hono/zod-openapi";
import { ADAPTER_TYPES } from "../../db/schema";
import { notFound } from "../../http/errors";
import { controlAuth, controlErrors, createRouter, json } from "../../http/openapi";
import { companyForActor, controlContext } from "../shared";
import { ADAPTER_MODELS, type AdapterType } from "./adapter-models";

/** Models an adapter type can be configured with (adapterConfig.model). */
export const adapterRoutes = createRouter();

const isAdapterType = (value: string): value is AdapterType =>
  (ADAPTER_TYPES as readonly string[]).includes(value);

const ModelSchema = z
  .object({ id: z.string(), label: z.string(), default: z.boolean().optional() })
  .openapi("AdapterModel");

adapterRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/adapters/{adapterType}/models",
    tags: ["Agents"],
    summary: `Selectable models of an adapter type (${ADAPTER_TYPES.join(", ")})`,
    description: "An unknown adapter type is a 404.",
    security: controlAuth,
    request: {
      params: z.object({ companyId: z.string().min(1).max(64), adapterType: z.string().min(1).max(64) }),
    },
    responses: { 200: json(z.array(ModelSchema), "Models; `default` marks the default"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { companyId, adapterType } = c.req.valid("param");
    await companyForActor(db, actor, companyId);
    if (!isAdapterType(adapterType)) throw notFound("Adapter type not found");
    return c.json(
      ADAPTER_MODELS[adapterType].map((model) => ({ ...model })),
      200,
    );
  },
);
