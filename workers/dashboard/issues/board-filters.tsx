import { ISSUE_STATUSES } from "../../db/schema";
import type { Company } from "../ui/board-shared";
import type { Option } from "../ui/components";
import { statusLabel } from "./board-card";

/** The board's own query parameters (a bookmarkable filter); `assignee` is `agent:<id>` or `user:<id>`. */
export const FILTERS = ["q", "status", "assignee", "projectId", "labelId", "dueBefore"] as const;
export type Filter = Partial<Record<(typeof FILTERS)[number], string>>;

/** The API's page size cap: the board reads up to this many issues for the current filter. */
export const BOARD_LIMIT = 500;

/** The API's query for a board filter: the list's filters, or the board's with `perColumn` cards. */
export function issuesQuery(
  filter: Filter,
  params = new URLSearchParams({ limit: String(BOARD_LIMIT) }),
): string {
  for (const name of ["q", "status", "projectId", "labelId", "dueBefore"] as const) {
    const value = filter[name]?.trim();
    if (value) params.set(name, value);
  }
  const assignee = filter.assignee ?? "";
  if (assignee.startsWith("agent:")) params.set("assigneeAgentId", assignee.slice("agent:".length));
  if (assignee.startsWith("user:")) params.set("assigneeUserId", assignee.slice("user:".length));
  return params.toString();
}

/** The board endpoint's query: the filter and how many cards each column draws. */
export const boardQuery = (filter: Filter, perColumn: number): string =>
  issuesQuery(filter, new URLSearchParams({ perColumn: String(perColumn) }));

export const filterOf = (query: (name: string) => string | undefined): Filter =>
  Object.fromEntries(FILTERS.map((name) => [name, query(name)]));

/** A GET form's control: ids prefixed so they never clash with the New issue form's fields. */
function FilterSelect(props: {
  name: keyof Filter;
  label: string;
  value: string | undefined;
  options: Option[];
}) {
  const id = `filter-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name}>
        {props.options.map((option) => (
          <option value={option.value} selected={option.value === (props.value ?? "")}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function FilterForm(props: {
  company: Company;
  filter: Filter;
  assignees: Option[];
  projects: Option[];
  labels: Option[];
}) {
  const { filter } = props;
  return (
    <form
      method="get"
      action={`/companies/${props.company.id}/issues`}
      class="row"
      aria-label="Filter issues"
    >
      <div class="field">
        <label for="filter-q">Search</label>
        <input id="filter-q" name="q" type="search" value={filter.q ?? ""} />
      </div>
      <FilterSelect
        name="status"
        label="Status"
        value={filter.status}
        options={[
          { value: "", label: "Any status" },
          ...ISSUE_STATUSES.map((status) => ({ value: status, label: statusLabel(status) })),
        ]}
      />
      <FilterSelect name="assignee" label="Assignee" value={filter.assignee} options={props.assignees} />
      <FilterSelect name="projectId" label="Project" value={filter.projectId} options={props.projects} />
      <FilterSelect name="labelId" label="Label" value={filter.labelId} options={props.labels} />
      <div class="field">
        <label for="filter-dueBefore">Due by</label>
        <input id="filter-dueBefore" name="dueBefore" type="date" value={filter.dueBefore ?? ""} />
      </div>
      <div>
        <button type="submit">Filter</button>
      </div>
    </form>
  );
}
