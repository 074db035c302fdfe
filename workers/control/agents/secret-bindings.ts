import type { Actor } from "../../core/actor";
import type { Db } from "../../db/client";
import type { JsonObject } from "../../db/schema";
import { badRequest, forbidden } from "../../http/errors";
import { bindingProblem, secretBindings } from "../secrets";

/**
 * Which company secrets reach an agent's runs is the board's choice. An agent that could write a
 * secret reference into adapterConfig.env (its own, a report's, a hire's) would receive any secret
 * of the company on its next run, so agents may keep or drop the references they have, never add or
 * change one. A board user's references are checked as they are saved: a secret of this company,
 * not pinned to a version rotated away.
 */
export async function ensureSecretBindingsAllowed(
  db: Db,
  actor: Actor,
  companyId: string,
  before: JsonObject | null,
  after: JsonObject,
): Promise<void> {
  const had = secretBindings(before?.env);
  const added = [...secretBindings(after.env)].filter(([variable, bound]) => had.get(variable) !== bound);
  if (added.length === 0) return;
  if (actor.type === "agent")
    throw forbidden(
      `Only board users bind company secrets to agents: adapterConfig.env.${added.map(([v]) => v).join(", ")} ` +
        "would add or change a secret reference",
    );
  const problem = await bindingProblem(db, companyId, after.env);
  if (problem) throw badRequest(problem);
}
