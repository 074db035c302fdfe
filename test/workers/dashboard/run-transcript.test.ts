// The issue page shows a run's conversation (the transcript its runner's adapter sent: tool calls
// with their inputs, tool results, the agent's text, the CLI's result) above the raw output.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimOne, openRunnerLink } from "../control/runner-link";
import { asSession, call, createUser } from "../helpers";
import { eventually } from "../patience";
import { browse, textOf, undrawn } from "./helpers";

describe("issue page run view", () => {
  it("shows the conversation of a claude_local run, and keeps the raw output", async () => {
    const owner = await createUser("OWNER");
    const headers = asSession(owner);
    const company = await call<{ id: string }>("POST", "/api/companies", {
      headers,
      body: {
        name: `Transcript Co ${crypto.randomUUID().slice(0, 6)}`,
        requireBoardApprovalForNewAgents: false,
      },
    });
    const hired = await call<{ agent: { id: string; name: string } }>(
      "POST",
      `/api/companies/${company.body.id}/agent-hires`,
      {
        headers,
        body: { name: "Narrator", role: "engineer", adapterType: "claude_local", adapterConfig: {} },
      },
    );
    expect(hired.status, JSON.stringify(hired.body)).toBe(201);
    const issue = await call<{ id: string; identifier: string }>(
      "POST",
      `/api/companies/${company.body.id}/issues`,
      {
        headers,
        body: { title: "Tell the story", status: "todo" },
      },
    );
    await env.DB.prepare(
      "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
    ).run();
    await call("POST", `/api/issues/${issue.body.id}/comments`, { headers, body: { body: "@Narrator go" } });
    const registered = await call<{ token: string }>("POST", `/api/companies/${company.body.id}/runners`, {
      headers,
      body: { name: "transcript test" },
    });
    const link = await openRunnerLink(registered.body.token);
    const run = await claimOne(link);
    const events = [
      { type: "tool_call", id: "t1", name: "Bash", input: '{"command":"echo once upon a time"}' },
      { type: "tool_result", toolCallId: "t1", isError: false, output: "once upon a time" },
      { type: "assistant", text: "The story is told." },
      {
        type: "result",
        ok: true,
        text: "The story is told.",
        costUsd: 0.25,
        inputTokens: 10,
        outputTokens: 5,
        turns: 2,
      },
    ];
    for (const [seq, event] of events.entries()) link.send({ type: "event", runId: run.runId, seq, event });
    link.send({ type: "log", runId: run.runId, seq: 0, stream: "stdout", text: '{"type":"result"}\n' });
    link.send({
      type: "finish",
      runId: run.runId,
      exitCode: 0,
      timedOut: false,
      logFrames: 1,
      eventFrames: events.length,
    });
    await eventually(async () => {
      const row = await env.DB.prepare("SELECT status FROM heartbeat_runs WHERE id = ?")
        .bind(run.runId)
        .first();
      return row?.status === "succeeded";
    });

    const page = await browse(owner, `/issues/${issue.body.identifier}`);
    expect(page.status).toBe(200);
    const conversation = page.html.match(/<h4>Conversation<\/h4>([\s\S]*?)<\/ol>/)?.[1] ?? "";
    expect(textOf(conversation)).toBe(
      'Tool call Bash: {"command":"echo once upon a time"} Tool result: once upon a time ' +
        "Agent: The story is told. Finished after 2 turns, $0.2500, 10 tokens in, 5 out: The story is told.",
    );
    // The raw stream is folded away under the conversation, not gone.
    const raw = page.html.match(/<details class="raw-output">([\s\S]*?)<\/details>/)?.[1] ?? "";
    expect(raw).toBe(
      "<summary>Raw output (1 line)</summary><pre>{&quot;type&quot;:&quot;result&quot;}\n</pre>",
    );
    expect(page.html).not.toContain("<h4>Output</h4>");
    // The run's own page listens to its issue's feed, for this run's changes only.
    const runPage = await browse(owner, `/runs/${run.runId}`);
    expect(undrawn(runPage.html).match(/<div id="run-live"[^>]*>/)?.[0]).toBe(
      `<div id="run-live" data-live="30" data-live-feed="/api/issues/${issue.body.id}/events?runId=${run.runId}">`,
    );
  });
});
