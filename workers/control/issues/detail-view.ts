import type { Db } from "../../db/client";
import type { IssueLocation } from "./locator";
import { issueResource } from "./resource";
import {
  ancestorsOf,
  blockerIdsFromChain,
  type ChainRow,
  chainIssueOf,
  chainQuery,
  goalOf,
  labelIdsFromChain,
  projectOf,
} from "./store";

const ancestorResource = (row: ChainRow) => ({
  id: row.id,
  identifier: row.identifier,
  title: row.title,
  status: row.status,
  priority: row.priority,
  assigneeAgentId: row.assignee_agent_id,
  projectId: row.project_id,
  goalId: row.goal_id,
  description: row.description,
  project: projectOf(row),
  goal: goalOf(row),
});

/** GET /issues/:id's body: the issue, its labels, project, goal and ancestors (nearest first). */
export function issueDetailFromChain(chain: ChainRow[]) {
  const { issue, self } = chainIssueOf(chain);
  return {
    ...issueResource(issue),
    labelIds: labelIdsFromChain(self),
    blockedByIssueIds: blockerIdsFromChain(self),
    project: projectOf(self),
    goal: goalOf(self),
    ancestors: ancestorsOf(chain, issue).map(ancestorResource),
  };
}

/** The detail as JSON text (what an IssueDO caches and returns across RPC); null when no such issue. */
export async function readIssueDetailJson(db: Db, location: IssueLocation): Promise<string | null> {
  const chain = await chainQuery(db, { type: "company", companyId: location.companyId }, location.id);
  if (chain[0]?.depth !== 0) return null;
  return JSON.stringify(issueDetailFromChain(chain));
}
