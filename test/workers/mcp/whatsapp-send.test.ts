// Agents' WhatsApp sends through /mcp on their company's line, under the board's governance (issue 27):
// the official SDK client, the real Worker, D1 and SessionDO; only the bridge is a fake, and what it
// was asked to send is what WhatsApp would have received.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { boardUser, seedAgent, seedCompany } from "../control/helpers";
import { call } from "../helpers";
import { callTool, connect, textOf } from "./client";
import { linkedLine, personJid } from "./whatsapp-line";

const approvalRow = (id: string) =>
  env.DB.prepare("SELECT type, status, payload FROM approvals WHERE id = ?")
    .bind(id)
    .first<{ type: string; status: string; payload: string }>();

const approvalIdOf = (text: string) => {
  const parsed = JSON.parse(text) as { status: string; approvalId: string; message: string };
  expect(parsed.status).toBe("pending_approval");
  expect(parsed.message).toMatch(new RegExp(`^pending approval ${parsed.approvalId}`));
  return parsed.approvalId;
};

describe("the company's line", () => {
  it("an owner links one of their sessions; others' sessions are 404; members cannot", async () => {
    const line = await linkedLine();
    const got = await call<{ sessionId: string }>("GET", `/api/companies/${line.company.id}/line`, {
      headers: line.agent.headers,
    });
    expect(got.status).toBe(200);
    expect(got.body.sessionId).toBe(line.session.slug);

    const stranger = await boardUser();
    const theirs = await call<{ data: { sessionId: string } }>("POST", "/api/sessions", {
      body: { name: "Not yours" },
      headers: stranger.headers,
    });
    const refused = await call("PUT", `/api/companies/${line.company.id}/line`, {
      body: { sessionId: theirs.body.data.sessionId },
      headers: line.owner.headers,
    });
    expect(refused.status).toBe(404);

    const member = await boardUser();
    await env.DB.prepare(
      "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, 'member', ?)",
    )
      .bind(line.company.id, member.userId, Date.now())
      .run();
    const byMember = await call("PUT", `/api/companies/${line.company.id}/line`, {
      body: { sessionId: line.session.slug },
      headers: member.headers,
    });
    expect(byMember.status).toBe(403);
  });

  it("an agent of a company without a line is told so; nothing is sent", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id);
    const client = await connect(agent.headers);
    const result = await callTool(client, "send_text", {
      sessionId: "sess_anything",
      jid: personJid(),
      text: "hello",
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/no WhatsApp line/);
  });

  it("another session id than the line's is 404 for an agent, even its linking owner's", async () => {
    const line = await linkedLine();
    const other = await linkedLine();
    const client = await connect(line.agent.headers);
    const result = await callTool(client, "send_text", {
      sessionId: other.session.slug,
      jid: personJid(),
      text: "hello",
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^HTTP 404/);
    expect(other.sent()).toEqual([]);
  });
});

describe("agents' sends under the default policy", () => {
  it("a contact who wrote first gets the message at once", async () => {
    const line = await linkedLine();
    const friend = personJid();
    await line.receiveFrom(friend, "hi, it's me");
    const client = await connect(line.agent.headers);
    const result = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: friend,
      text: "Hello!",
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(JSON.parse(textOf(result)).data.id).toEqual(expect.any(String));
    expect(line.sent(friend)).toEqual([
      expect.objectContaining({ content: { type: "text", text: "Hello!" } }),
    ]);
  });

  it("a stranger: an approval, nothing sent; approved twice and concurrently, sent exactly once", async () => {
    const line = await linkedLine();
    const stranger = personJid();
    const client = await connect(line.agent.headers);
    const result = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: stranger,
      text: "Cold hello",
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const approvalId = approvalIdOf(textOf(result));
    expect(line.sent()).toEqual([]);
    const pending = await approvalRow(approvalId);
    expect(pending?.type).toBe("whatsapp_send");
    expect(pending?.status).toBe("pending");
    expect(JSON.parse(pending?.payload ?? "{}")).toMatchObject({
      tool: "send_text",
      sessionId: line.session.slug,
      recipient: stranger,
      arguments: { text: "Cold hello" },
    });

    const approve = () =>
      call<{ status: string; payload: { delivery?: { status: string; messageId: string } } }>(
        "POST",
        `/api/approvals/${approvalId}/approve`,
        { body: {}, headers: line.owner.headers },
      );
    const answers = await Promise.all([approve(), approve()]);
    for (const answer of answers) expect(answer.status).toBe(200);
    const again = await approve();
    expect(again.status).toBe(200);

    const sent = line.sent(stranger);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.content).toEqual({ type: "text", text: "Cold hello" });
    const row = await approvalRow(approvalId);
    expect(row?.status).toBe("approved");
    expect(JSON.parse(row?.payload ?? "{}").delivery).toMatchObject({
      status: "sent",
      messageId: expect.any(String),
    });
    // It counts against the agent's daily cap when it is sent, once.
    const used = await env.DB.prepare("SELECT count FROM agent_daily_sends WHERE agent_id = ?")
      .bind(line.agent.id)
      .first<{ count: number }>();
    expect(used?.count).toBe(1);
  });

  it("a rejected send is never sent", async () => {
    const line = await linkedLine();
    const stranger = personJid();
    const client = await connect(line.agent.headers);
    const result = await callTool(client, "send_location", {
      sessionId: line.session.slug,
      jid: stranger,
      latitude: 1.5,
      longitude: 2.5,
    });
    const approvalId = approvalIdOf(textOf(result));
    const rejected = await call("POST", `/api/approvals/${approvalId}/reject`, {
      body: {},
      headers: line.owner.headers,
    });
    expect(rejected.status).toBe(200);
    const approveAfter = await call("POST", `/api/approvals/${approvalId}/approve`, {
      body: {},
      headers: line.owner.headers,
    });
    expect(approveAfter.status).toBe(422);
    expect(line.sent()).toEqual([]);
  });
});

describe("the board's policy", () => {
  it("off refuses; allowed sends even to a stranger; a user key sends as over REST", async () => {
    const line = await linkedLine();
    const put = (policies: Record<string, string>) =>
      call("PUT", `/api/companies/${line.company.id}/mcp-policy`, {
        body: { policies },
        headers: line.owner.headers,
      });
    expect((await put({ send_text: "off" })).status).toBe(200);
    const client = await connect(line.agent.headers);
    const stranger = personJid();
    const off = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: stranger,
      text: "x",
    });
    expect(off.isError).toBe(true);
    expect(textOf(off)).toMatch(/^HTTP 403: The board has turned send_text off/);
    expect(line.sent()).toEqual([]);

    expect((await put({ send_text: "allowed" })).status).toBe(200);
    const allowed = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: stranger,
      text: "y",
    });
    expect(allowed.isError, textOf(allowed)).toBeFalsy();
    expect(line.sent(stranger)).toHaveLength(1);

    const asUser = await connect(line.owner.headers);
    const byUser = await callTool(asUser, "send_text", {
      sessionId: line.session.slug,
      jid: personJid(),
      text: "z",
    });
    expect(byUser.isError, textOf(byUser)).toBeFalsy();
    expect(line.sent()).toHaveLength(2);

    const agentPut = await call("PUT", `/api/companies/${line.company.id}/mcp-policy`, {
      body: { policies: { send_text: "allowed" } },
      headers: line.agent.headers,
    });
    expect(agentPut.status).toBe(403);
  });

  it("the daily cap refuses the next send with the cap and when it resets", async () => {
    const line = await linkedLine();
    const put = await call("PUT", `/api/companies/${line.company.id}/mcp-policy`, {
      body: { policies: { send_text: "allowed" }, dailySendCap: 1 },
      headers: line.owner.headers,
    });
    expect(put.status).toBe(200);
    const client = await connect(line.agent.headers);
    const first = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: personJid(),
      text: "1",
    });
    expect(first.isError, textOf(first)).toBeFalsy();
    const second = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: personJid(),
      text: "2",
    });
    expect(second.isError).toBe(true);
    expect(textOf(second)).toMatch(/^HTTP 429: Daily send cap reached: .* 1 WhatsApp messages per UTC day/);
    expect(textOf(second)).toMatch(/resets at \d{4}-\d{2}-\d{2}T00:00:00.000Z/);
    expect(line.sent()).toHaveLength(1);
  });
});

describe("the send tools", () => {
  it("are listed with the gateway routes' schemas", async () => {
    const line = await linkedLine();
    const { tools } = await (await connect(line.agent.headers)).listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of [
      "send_text",
      "send_media",
      "send_location",
      "send_poll",
      "send_reaction",
      "schedule_message",
    ])
      expect(byName.get(name)?.description).toMatch(/pending approval/);
    expect(byName.get("send_poll")?.inputSchema.required).toEqual(
      expect.arrayContaining(["sessionId", "jid", "question", "options"]),
    );
    expect(byName.get("schedule_message")?.inputSchema.required).toEqual(
      expect.arrayContaining(["sessionId", "jid", "sendAt"]),
    );
  });
});

describe("the activity log of tool calls", () => {
  const toolRows = async (companyId: string) =>
    (
      await env.DB.prepare(
        "SELECT actor_type, actor_id, entity_id, details FROM activity_log WHERE company_id = ? AND action = 'mcp.tool_called' ORDER BY created_at, rowid",
      )
        .bind(companyId)
        .all<{ actor_type: string; actor_id: string; entity_id: string; details: string }>()
    ).results.map((row) => ({ ...row, details: JSON.parse(row.details) as Record<string, unknown> }));

  it("records who called which tool, the arguments with secrets redacted, and the outcome", async () => {
    const line = await linkedLine();
    const client = await connect(line.agent.headers);
    await callTool(client, "me");
    const secret = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4";
    const pending = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: personJid(),
      text: secret,
    });
    const approvalId = JSON.parse(textOf(pending)).approvalId as string;
    await call("PUT", `/api/companies/${line.company.id}/mcp-policy`, {
      body: { policies: { send_poll: "off" } },
      headers: line.owner.headers,
    });
    await callTool(client, "send_poll", {
      sessionId: line.session.slug,
      jid: personJid(),
      question: "Lunch?",
      options: ["yes", "no"],
    });

    const rows = await toolRows(line.company.id);
    expect(rows.map((row) => [row.actor_type, row.actor_id, row.entity_id])).toEqual([
      ["agent", line.agent.id, "me"],
      ["agent", line.agent.id, "send_text"],
      ["agent", line.agent.id, "send_poll"],
    ]);
    expect(rows[0]?.details).toMatchObject({ tool: "me", outcome: "ok" });
    expect(rows[1]?.details).toMatchObject({
      outcome: "pending_approval",
      approvalId,
      arguments: { sessionId: line.session.slug, text: "***REDACTED***" },
    });
    expect(JSON.stringify(rows[1]?.details)).not.toContain(secret);
    expect(rows[2]?.details).toMatchObject({
      outcome: "error",
      status: 403,
      arguments: { question: "Lunch?" },
    });
  });
});

describe("pacing of agents' sends per session", () => {
  const slotOf = (sessionId: string) =>
    env.DB.prepare("SELECT next_at FROM line_send_slots WHERE session_id = ?")
      .bind(sessionId)
      .first<{ next_at: number }>();

  it("shows typing before the message and holds the next agent send a broadcast gap back", async () => {
    const line = await linkedLine();
    const friend = personJid();
    await line.receiveFrom(friend, "hello there");
    const client = await connect(line.agent.headers);
    const before = Date.now();
    const result = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: friend,
      text: "Hi",
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const ops = line.session.link.frames
      .filter((f) => f.type === "command" && f.name === "wa")
      .map((f) => f.args as { op: string; chat?: string; presence?: string; to?: string });
    const typing = ops.findIndex(
      (op) => op.op === "presence" && op.chat === friend && op.presence === "composing",
    );
    const sent = ops.findIndex((op) => op.op === "send" && op.to === friend);
    expect(typing).toBeGreaterThanOrEqual(0);
    expect(sent).toBeGreaterThan(typing);
    // The next agent send on this session may not go before the broadcast gap (10 s minimum here).
    expect((await slotOf(line.session.id))?.next_at).toBeGreaterThanOrEqual(before + 10_000);
  });

  it("refuses a send whose turn is too far away; nothing is sent and the cap is not used", async () => {
    const line = await linkedLine();
    const friend = personJid();
    await line.receiveFrom(friend, "hello there");
    await env.DB.prepare("INSERT INTO line_send_slots (session_id, next_at) VALUES (?, ?)")
      .bind(line.session.id, Date.now() + 10 * 60_000)
      .run();
    const client = await connect(line.agent.headers);
    const result = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: friend,
      text: "Hi",
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^HTTP 429: The line is busy: .*retry after \d{4}-/);
    expect(line.sent()).toEqual([]);
    const used = await env.DB.prepare("SELECT count FROM agent_daily_sends WHERE agent_id = ?")
      .bind(line.agent.id)
      .first<{ count: number }>();
    expect(used?.count ?? 0).toBe(0);
  });
});

describe("whatsapp_send approvals", () => {
  it("cannot be created over REST: only the send tools file them", async () => {
    const line = await linkedLine();
    for (const headers of [line.owner.headers, line.agent.headers]) {
      const created = await call("POST", `/api/companies/${line.company.id}/approvals`, {
        body: {
          type: "whatsapp_send",
          payload: { tool: "send_text", sessionId: line.session.slug, recipient: personJid(), arguments: {} },
        },
        headers,
      });
      expect(created.status).toBe(422);
    }
    const count = await env.DB.prepare("SELECT count(*) AS n FROM approvals WHERE company_id = ?")
      .bind(line.company.id)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
  });
});
