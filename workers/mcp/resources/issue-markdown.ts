/** What an issue resource renders: GET /issues/{id} with its comments (tools/issue-read.ts). */
export interface IssueForMarkdown {
  id: string;
  companyId: string;
  identifier: string;
  title: string;
  description: string | null;
  status: string;
  priority: string;
  assigneeAgentId: string | null;
  assigneeUserId: string | null;
  blockedByIssueIds: string[];
  project: { name: string } | null;
  goal: { title: string } | null;
  ancestors: Array<{ identifier: string; title: string; status: string }>;
  comments: Array<{
    body: string;
    authorAgentId: string | null;
    authorUserId: string | null;
    createdAt: string;
  }>;
  nextCommentsAfter?: string;
}

type Names = ReadonlyMap<string, string>;

const agentLabel = (names: Names, id: string) => `${names.get(id) ?? "an agent"} (agent ${id})`;

function assigneeOf(issue: IssueForMarkdown, names: Names): string {
  if (issue.assigneeAgentId) return agentLabel(names, issue.assigneeAgentId);
  if (issue.assigneeUserId) return `a board member (user ${issue.assigneeUserId})`;
  return "nobody";
}

function authorOf(comment: IssueForMarkdown["comments"][number], names: Names): string {
  if (comment.authorAgentId) return agentLabel(names, comment.authorAgentId);
  return comment.authorUserId ? `a board member (user ${comment.authorUserId})` : "the platform";
}

function facts(issue: IssueForMarkdown, names: Names): string[] {
  const lines = [
    `Status: ${issue.status} · Priority: ${issue.priority} · Assignee: ${assigneeOf(issue, names)}`,
    `Id: ${issue.id}`,
  ];
  if (issue.ancestors.length > 0)
    lines.push(
      `Part of (nearest first): ${issue.ancestors.map((a) => `${a.identifier}: ${a.title} [${a.status}]`).join(" ← ")}`,
    );
  if (issue.project) lines.push(`Project: ${issue.project.name}`);
  if (issue.goal) lines.push(`Goal: ${issue.goal.title}`);
  if (issue.blockedByIssueIds.length > 0) lines.push(`Blocked by: ${issue.blockedByIssueIds.join(", ")}`);
  return lines;
}

function commentsSection(issue: IssueForMarkdown, names: Names): string[] {
  const lines = [`## Comments (${issue.comments.length}${issue.nextCommentsAfter ? "+" : ""})`, ""];
  if (issue.comments.length === 0) lines.push("None yet.", "");
  for (const comment of issue.comments)
    lines.push(`### ${authorOf(comment, names)} · ${comment.createdAt}`, "", comment.body, "");
  if (issue.nextCommentsAfter)
    lines.push(`More comments follow: get_issue with after "${issue.nextCommentsAfter}".`, "");
  return lines;
}

/** The issue as a model reads it best: the facts first, then the description, then the thread. */
export function issueMarkdown(issue: IssueForMarkdown, names: Names): string {
  return [
    `# ${issue.identifier}: ${issue.title}`,
    "",
    ...facts(issue, names),
    "",
    "## Description",
    "",
    issue.description?.trim() || "(none)",
    "",
    ...commentsSection(issue, names),
  ]
    .join("\n")
    .trimEnd();
}
