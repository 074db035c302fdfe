import { createRoute, z } from "@hono/zod-openapi";
import { ADAPTER_TYPES } from "../../db/schema";
import { notFound } from "../../http/errors";
import { controlAuth, controlErrors, createRouter, json } from "../../http/openapi";
import { reportedModels } from "../runners";
import { companyForActor, controlContext } from "../shared";
import { ADAPTER_MODELS, type AdapterType, type ModelOption } from "./adapter-models";
import { providerModels } from "./provider-models";
import { findAgent } from "./store";

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
    description:
      "With `agentId` of an agent of this type whose adapterConfig.provider names a base URL: the " +
      "models that provider lists (`GET <baseUrl>/models`, called with the agent's key from its env; " +
      "OpenCode's as `<provider>/<model>`), when it answers with a list. Otherwise the models the " +
      "adapter's CLI lists on the company's connected runners (Codex's built-in catalogue, " +
      "OpenCode's `<provider>/<model>` list), else a static catalogue of what the pinned CLI knows. " +
      "An unknown adapter type, or an agentId not of this company, is a 404.",
    security: controlAuth,
    request: {
      params: z.object({ companyId: z.string().min(1).max(64), adapterType: z.string().min(1).max(64) }),
      query: z.object({
        agentId: z
          .string()
          .min(1)
          .max(64)
          .optional()
          .openapi({ description: "Ask the agent's own provider (adapterConfig.provider.baseUrl)" }),
      }),
    },
    responses: { 200: json(z.array(ModelSchema), "Models; `default` marks the default"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { companyId, adapterType } = c.req.valid("param");
    await companyForActor(db, actor, companyId);
    if (!isAdapterType(adapterType)) throw notFound("Adapter type not found");
    const { agentId } = c.req.valid("query");
    if (agentId !== undefined) {
      const agent = await findAgent(db, actor, agentId);
      if (agent.companyId !== companyId) throw notFound("Agent not found");
      const served = agent.adapterType === adapterType ? await providerModels(c.env, db, agent) : null;
      if (served) return c.json(served, 200);
    }
    const reported = await reportedModels(db, companyId, adapterType);
    return c.json(
      reported.length > 0
        ? asOptions(reported, ADAPTER_MODELS[adapterType])
        : [...ADAPTER_MODELS[adapterType]],
      200,
    );
  },
);

/**
 * Reported model ids as options: labels from the catalogue where it knows the model; the default is
 * the catalogue's default when a runner has it, else the first reported (the CLI's own first), and
 * comes first.
 */
function asOptions(ids: string[], catalogue: readonly ModelOption[]): ModelOption[] {
  const known = new Map(catalogue.map((model) => [model.id, model.label]));
  const fallback = catalogue.find((model) => model.default)?.id;
  const defaultId = fallback && ids.includes(fallback) ? fallback : ids[0];
  const ordered = defaultId ? [defaultId, ...ids.filter((id) => id !== defaultId)] : ids;
  return ordered.map((id) => ({
    id,
    label: known.get(id) ?? id,
    ...(id === defaultId ? { default: true } : {}),
  }));
}
