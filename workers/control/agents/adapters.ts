import { createRoute, z } from "@hono/zod-openapi";
import { ADAPTER_TYPES } from "../../db/schema";
import { notFound } from "../../http/errors";
import { controlAuth, controlErrors, createRouter, json } from "../../http/openapi";
import { companyForActor, controlContext } from "../shared/access";

/** Models an adapter type can be configured with (adapterConfig.model). */
export const adapterRoutes = createRouter();

type AdapterType = (typeof ADAPTER_TYPES)[number];
interface ModelOption {
  id: string;
  label: string;
  default?: boolean;
}

/**
 * A static catalogue: both adapters run a local CLI, which picks among these models. The first of
 * each list is the default an agent without adapterConfig.model runs with.
 */
export const ADAPTER_MODELS: Record<AdapterType, readonly ModelOption[]> = {
  coder_local: [
    { id: "claude-sonnet-4-5", label: "Claude Sonnet 4.5", default: true },
    { id: "claude-opus-4-1", label: "Claude Opus 4.1" },
    { id: "claude-haiku-4-5", label: "Claude Haiku 4.5" },
    { id: "gpt-5-codex", label: "GPT-5 Codex" },
  ],
  assistant_local: [
    { id: "gpt-5", label: "GPT-5", default: true },
    { id: "gpt-5-mini", label: "GPT-5 mini" },
    { id: "claude-sonnet-4-5", label: "Claude Sonnet 4.5" },
  ],
};

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
