import type { Context } from "hono";
import type { z } from "zod";
import type { AgentSchema } from "../../control/agents";
import type { CompanySchema } from "../../control/companies";
import type { ApiResult, FieldErrors } from "./api-client";
import type { ActionRefusal, FormState } from "./components";
import type { DashboardEnv } from "./env";
import type { CompanyNav, CompanyTab } from "./layout";
import { formWithErrors } from "./render";

export type Company = z.infer<typeof CompanySchema>;
export type Agent = z.infer<typeof AgentSchema>;
export type BoardContext = Context<DashboardEnv>;

// ---------------------------------------------------------------------------------------------
// Shared by the board pages (org, issues, approvals, costs, routines): loading the company for the
// tab bar, agent names, money, and turning form strings into the API's JSON types.
// ---------------------------------------------------------------------------------------------

export const apiCompanyPath = (companyId: string) => `/api/companies/${encodeURIComponent(companyId)}`;

/** The company, through the API: another tenant's id answers the API's 404 page. */
export function loadCompany(c: BoardContext, companyId: string): Promise<Company> {
  return c.var.api.get<Company>(apiCompanyPath(companyId));
}

export function loadAgents(c: BoardContext, companyId: string): Promise<Agent[]> {
  return c.var.api.get<Agent[]>(`${apiCompanyPath(companyId)}/agents`);
}

export const companyNav = (company: Company, tab: CompanyTab): CompanyNav => ({
  id: company.id,
  name: company.name,
  tab,
});

export const agentNamesOf = (agents: readonly Agent[]) =>
  new Map(agents.map((agent) => [agent.id, agent.name] as const));

const USD = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });

/** The API counts cents; people read dollars. */
export const dollars = (cents: number) => USD.format(cents / 100);

/** A blank optional text field is left out, so the API applies its default instead of "". */
export function optionalText(value: string | undefined): string | undefined {
  const trimmed = value?.trim() ?? "";
  return trimmed === "" ? undefined : trimmed;
}

/**
 * A numeric field as a JSON number. Anything that is not a number is passed on as typed, so the
 * API's own type check produces the message (rather than a second rule here).
 */
export function optionalNumber(value: string | undefined): number | string | undefined {
  const trimmed = value?.trim() ?? "";
  if (trimmed === "") return undefined;
  return /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/** A select whose "" option means "none": JSON null. */
export const idOrNull = (value: string | undefined) => optionalText(value) ?? null;

/**
 * The control plane's 422s name their field as a prefix ("assigneeAgentId: no such agent in this
 * company") rather than in `details`; put such a message next to that field when the form has it.
 */
export function placeFieldMessages(
  result: ApiResult<unknown> & { ok: false },
  formFields: readonly string[],
  rename: Record<string, string> = {},
): FieldErrors {
  const errors: FieldErrors = {};
  for (const [name, message] of Object.entries(result.fields)) {
    if (name !== "_form") {
      // A nested path (adapterConfig.args) belongs to the field that holds the JSON.
      const [head = name, ...rest] = name.split(".");
      const target = rename[head] ?? head;
      const text = rest.length > 0 ? `${rest.join(".")}: ${message}` : message;
      if (formFields.includes(target)) errors[target] ??= text;
      else errors._form ??= `${name}: ${message}`;
      continue;
    }
    const match = message.match(/^(\w+): (.+)$/s);
    const field = match?.[1] ? (rename[match[1]] ?? match[1]) : undefined;
    if (match?.[2] && field && formFields.includes(field)) errors[field] ??= match[2];
    else errors._form ??= message;
  }
  return errors;
}

/** A failed submit, re-rendered with the API's messages placed by field. */
export function failedForm(
  values: Record<string, string>,
  result: ApiResult<unknown> & { ok: false },
  formFields: readonly string[],
  rename: Record<string, string> = {},
): FormState {
  return { ...formWithErrors(values, result), errors: placeFieldMessages(result, formFields, rename) };
}

/**
 * Who did something, in words: an agent by its name, a person by the name the API resolved for the row
 * (`authorName`, `actorName`, `requestedByName`), "You" for the viewer.
 */
export function actorLabel(
  viewerId: string,
  names: ReadonlyMap<string, string>,
  actor: { type: string; id: string | null | undefined; name?: string | null },
): string {
  if (actor.type === "agent") return names.get(actor.id ?? "") ?? actor.name ?? "An agent no longer listed";
  if (actor.type === "system") return "System";
  if (actor.id === viewerId) return "You";
  return actor.name ?? "A former member";
}

/** Who created a row with agent/user author columns and the name the API resolved for it (`…ByName`). */
export const authorLabel = (
  viewerId: string,
  names: ReadonlyMap<string, string>,
  agentId: string | null,
  userId: string | null,
  name: string | null = null,
): string =>
  agentId
    ? actorLabel(viewerId, names, { type: "agent", id: agentId, name })
    : actorLabel(viewerId, names, { type: "user", id: userId, name });

/** Two letters for a small avatar: a name's first and last word ("Ada Lovelace" → "AL"). */
export function initialsOf(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const first = words[0]?.[0] ?? "?";
  const last = words.length > 1 ? (words.at(-1)?.[0] ?? "") : "";
  return (first + last).toUpperCase();
}

/** A person's or agent's initials in a circle, beside their name (which screen readers read instead). */
export function Avatar({ name }: { name: string }) {
  return (
    <span class="avatar" aria-hidden="true">
      {initialsOf(name)}
    </span>
  );
}

/** Who made something, as the issue page shows it: their avatar and name ("You" for the viewer). */
export function Byline({ label }: { label: string }) {
  return (
    <span class="byline">
      <Avatar name={label} /> {label}
    </span>
  );
}

/**
 * Where a refused one-button action's message goes: next to its button, or, for a 403 (the person may
 * not do it at all, so the page showed them no such button), above the page.
 */
export function refusalView(
  result: ApiResult<unknown> & { ok: false },
  name: string,
): { refusal: ActionRefusal } | { alert: string } {
  return result.status === 403 ? { alert: result.error } : { refusal: { name, message: result.error } };
}

/** A message above a page's content, for a one-button action that the API refused. */
export function ActionAlert({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="alert" role="alert">
      {message}
    </p>
  );
}

/** An issue's priority, with the word "Priority" for screen readers. */
export function PriorityBadge({ priority }: { priority: string }) {
  return (
    <span class={`badge ${priority === "critical" || priority === "high" ? "danger" : "neutral"}`}>
      <span class="sr-only">Priority </span>
      {priority}
    </span>
  );
}
