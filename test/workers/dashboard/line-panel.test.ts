// The company settings page's "WhatsApp line" panel (issue 28): the line's session and state, the
// members who linked a number (verified or not), and the last notices with their status.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { boardUser } from "../control/helpers";
import { call, createUser } from "../helpers";
import { linkedLine } from "../mcp/whatsapp-line";
import { eventually } from "../patience";
import { browse, textOf } from "./helpers";

async function linkNumber(companyId: string, userId: string, phone: string, verified: boolean) {
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO line_members (company_id, user_id, phone, verified_at, time_zone, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'UTC', ?, ?)`,
  )
    .bind(companyId, userId, phone, verified ? now : null, now, now)
    .run();
}

describe("company settings: WhatsApp line panel", () => {
  it("shows the session and its state, the linked numbers and the last notices", async () => {
    const line = await linkedLine();
    const reader = await createUser("OWNER");
    const pending = await boardUser();
    for (const userId of [reader.userId, pending.userId])
      await env.DB.prepare(
        "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, 'member', ?)",
      )
        .bind(line.company.id, userId, Date.now())
        .run();
    await linkNumber(line.company.id, line.owner.userId, "491711110001", true);
    await linkNumber(line.company.id, pending.userId, "491711110002", false);

    const before = textOf((await browse(reader, `/companies/${line.company.id}/settings`)).html);
    expect(before).toContain("WhatsApp line");
    expect(before).toContain("Nothing sent on the line yet.");

    const created = await call("POST", `/api/companies/${line.company.id}/approvals`, {
      body: {
        type: "request_board_approval",
        payload: { title: "A domain" },
        requestedByAgentId: line.agent.id,
      },
      headers: line.owner.headers,
    });
    expect(created.status).toBe(201);
    await eventually(async () => {
      const row = await env.DB.prepare("SELECT status FROM line_notices WHERE company_id = ?")
        .bind(line.company.id)
        .first<{ status: string }>();
      return row?.status === "sent";
    });

    const page = await browse(reader, `/companies/${line.company.id}/settings`);
    expect(page.status).toBe(200);
    const text = textOf(page.html);
    expect(text).toContain(`${line.session.slug}): connected`);
    expect(text).toContain("+491711110001 verified");
    expect(text).toContain("+491711110002 not verified");
    expect(text).toMatch(/\(\+491711110001\) Approval sent/);
  });
});
