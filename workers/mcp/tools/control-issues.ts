import { z } from "@hono/zod-openapi";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  AskQuestionBodySchema,
  CreateIssueBodySchema,
  DocumentParamSchema,
  IssueParamSchema,
  ListIssuesQuerySchema,
  PutDocumentBodySchema,
} from "../../control/issues";
import { issuePath, queryString, restAs } from "./issue-read";
import { type AnyToolDefinition, defineTool, type ToolContext } from "./registry";
import { type RestAnswer, toolResultOf } from "./rest";

/** What counts as an agent's open work: what the heartbeat protocol's "my work" step lists. */
const OPEN_WORK = "todo,in_progress,blocked";

const InboxToolInput = z.strictObject({
  status: ListIssuesQuerySchema.shape.status.describe(
    `Agent keys: the statuses to list, comma-separated (default ${OPEN_WORK})`,
  ),
  limit: ListIssuesQuerySchema.shape.limit.describe("At most this many issues (default 100)"),
});

const { parentId: _parentField, ...newIssueFields } = CreateIssueBodySchema.shape;
const SubtaskToolInput = z.strictObject({
  parentId: IssueParamSchema.shape.issueId.describe("The parent issue: its id or identifier (ACM-12)"),
  ...newIssueFields,
});
const QuestionToolInput = z.strictObject({ ...IssueParamSchema.shape, ...AskQuestionBodySchema.shape });
const DocumentToolInput = z.strictObject({ ...DocumentParamSchema.shape, ...PutDocumentBodySchema.shape });

/** A list answer as an object (`{issues: […]}`): some clients read the first text as a JSON object. */
export function listResultOf(answer: RestAnswer, key: string): CallToolResult {
  if (answer.status !== 200 || !Array.isArray(answer.body)) return toolResultOf(answer);
  return toolResultOf({ status: 200, body: { [key]: answer.body } });
}

async function myInbox(ctx: ToolContext, { status, limit }: z.infer<typeof InboxToolInput>) {
  const { actor } = ctx.caller;
  if (actor.type === "board") {
    if (status !== undefined)
      return toolResultOf({
        status: 400,
        body: { error: "status: only for agent keys; a user key's inbox is their Mine inbox, unfiltered" },
      });
    return listResultOf(
      await restAs(ctx, { method: "GET", path: `/agents/me/inbox/mine?limit=${limit}` }),
      "issues",
    );
  }
  const query = queryString({ assigneeAgentId: actor.agentId, status: status ?? OPEN_WORK, limit });
  const path = `/companies/${encodeURIComponent(actor.companyId)}/issues${query}`;
  return listResultOf(await restAs(ctx, { method: "GET", path }), "issues");
}

/** The subtask goes to the parent's company: read the parent first (404 for another company's). */
async function createSubtask(ctx: ToolContext, { parentId, ...fields }: z.infer<typeof SubtaskToolInput>) {
  const parent = await restAs(ctx, { method: "GET", path: issuePath(parentId) });
  if (parent.status !== 200) return toolResultOf(parent);
  const { id, companyId } = parent.body as { id: string; companyId: string };
  const path = `/companies/${encodeURIComponent(companyId)}/issues`;
  return toolResultOf(await restAs(ctx, { method: "POST", path, body: { ...fields, parentId: id } }));
}

/** A 409 on a document write, said so a model knows the one way forward. */
function explainDocumentConflict(answer: RestAnswer): string | undefined {
  if (answer.status !== 409) return undefined;
  const current = (answer.body as { details?: { currentRevisionId?: string | null } })?.details
    ?.currentRevisionId;
  if (!current) return "The document does not exist yet: call again without baseRevisionId to create it.";
  return (
    `The document already exists at revision ${current}. Read it (get_document), merge your change into ` +
    `its body, and call again with baseRevisionId "${current}". Do not overwrite it blindly.`
  );
}

/** Issue tools beyond the first five (control.ts): inbox, subtasks, questions, documents. */
export const controlIssueTools: AnyToolDefinition[] = [
  defineTool({
    name: "my_inbox",
    domain: "control",
    scope: "read",
    description:
      `Your assigned work. Agent keys: the issues assigned to you in status ${OPEN_WORK} (or the statuses ` +
      "you pass), most urgent first (priority, then oldest): pick from these, start with the wake's issue " +
      "if you have one, then checkout_issue. User keys: your Mine inbox (issues you created, are assigned " +
      "or commented on, with isUnreadForMe). Answers {issues: [...]}.",
    inputSchema: InboxToolInput,
    annotations: { readOnlyHint: true },
    run: myInbox,
  }),
  defineTool({
    name: "create_subtask",
    domain: "control",
    scope: "control",
    description:
      "Create a child issue under a parent issue (in the parent's company), to split work or delegate it: " +
      "title, description, priority, and assigneeAgentId to hand the part to a colleague (who is woken; " +
      "status then defaults to todo, else backlog). Answers the new issue with its identifier.",
    inputSchema: SubtaskToolInput,
    run: createSubtask,
  }),
  defineTool({
    name: "ask_question",
    domain: "control",
    scope: "control",
    description:
      "Ask the board a question on an issue when you cannot go on without an answer (say what you need and " +
      "from whom). A pending question lets you then set the issue blocked (update_issue status blocked); " +
      "the answer wakes you with reason issue_question_answered. Answers the pending question.",
    inputSchema: QuestionToolInput,
    run: (ctx, { issueId, body }) =>
      restAs(ctx, { method: "POST", path: `${issuePath(issueId)}/questions`, body: { body } }).then(
        (answer) => toolResultOf(answer),
      ),
  }),
  defineTool({
    name: "get_document",
    domain: "control",
    scope: "read",
    description:
      "Read an issue document (plan, spec, notes) by key: its current body, title, format and " +
      "latestRevisionId (what record_document needs as baseRevisionId to revise it).",
    inputSchema: DocumentParamSchema,
    annotations: { readOnlyHint: true },
    run: (ctx, { issueId, key }) =>
      restAs(ctx, { method: "GET", path: `${issuePath(issueId)}/documents/${encodeURIComponent(key)}` }).then(
        (answer) => toolResultOf(answer),
      ),
  }),
  defineTool({
    name: "record_document",
    domain: "control",
    scope: "control",
    description:
      "Write an issue document by key (e.g. plan, spec, notes; lowercase a-z 0-9 . _ -), kept with its " +
      "revisions. A new key: omit baseRevisionId (revision 1). An existing one: pass the latestRevisionId you " +
      "read (get_document) as baseRevisionId; a stale or missing one is refused with the current revision, " +
      "so nobody's edit is lost. format markdown (default) or text. Answers the document at its new revision.",
    inputSchema: DocumentToolInput,
    run: (ctx, { issueId, key, ...body }) =>
      restAs(ctx, {
        method: "PUT",
        path: `${issuePath(issueId)}/documents/${encodeURIComponent(key)}`,
        body,
      }).then((answer) => toolResultOf(answer, explainDocumentConflict)),
  }),
];
