// The user's own number on a company's WhatsApp line, from their own page (issue 28): the code really
// goes out on the line (the fake bridge records it), is entered in the page, and preferences are saved
// through the API with its messages shown next to the fields.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createUser } from "../helpers";
import { linkedLine } from "../mcp/whatsapp-line";
import { browse, fieldError, submit, textOf } from "./helpers";

const phone = () =>
  `4915${String(crypto.getRandomValues(new Uint32Array(1))[0])
    .padStart(10, "0")
    .slice(0, 8)}`;

/** The checkbox input named `name`, as rendered. */
const checkbox = (html: string, name: string) =>
  html.match(new RegExp(`<input[^>]*name="${name}"[^>]*>`))?.[0] ?? `no input named ${name}`;

describe("the WhatsApp panel on the user's own page", () => {
  it("links a number, confirms the code the line sent, saves preferences and unlinks", async () => {
    const line = await linkedLine();
    const member = await createUser("OWNER");
    await env.DB.prepare(
      "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, 'member', ?)",
    )
      .bind(line.company.id, member.userId, Date.now())
      .run();
    const field = (name: string) => `${name}-${line.company.id}`;
    const base = `/phone/${line.company.id}`;

    const page = await browse(member, "/phone");
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toContain(`WhatsApp: ${line.company.name} No number linked`);

    const bad = await submit(member, `${base}/number`, { [field("phone")]: "12ab" });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, field("phone"))).toMatch(/E\.164/);

    const number = phone();
    const sent = await submit(member, `${base}/number`, { [field("phone")]: `+${number}` });
    expect(sent.status, textOf(sent.html).slice(0, 300)).toBe(303);
    const texts = line.sent(`${number}@s.whatsapp.net`).map((m) => String(m.content.text));
    const code = texts[0]?.match(/: (\d{6}) \(valid 10 minutes\)$/)?.[1] ?? "";
    expect(code).toMatch(/^\d{6}$/);
    expect(textOf((await browse(member, "/phone")).html)).toContain(`Your number: +${number} (not verified`);

    const wrong = await submit(member, `${base}/verify`, {
      [field("code")]: code === "000000" ? "111111" : "000000",
    });
    expect(wrong.status).toBe(422);
    expect(textOf(wrong.html)).toContain("Wrong code; 4 tries left");
    expect((await submit(member, `${base}/verify`, { [field("code")]: code })).status).toBe(303);
    const verified = await browse(member, "/phone");
    expect(textOf(verified.html)).toContain(`Your number: +${number} (verified)`);
    // Mentions and assignments (issue 30) are one of the choices, on by default.
    expect(textOf(verified.html)).toContain("Mentions of me and issues assigned to me");
    expect(checkbox(verified.html, field("notify_mentions"))).toMatch(/\schecked/);

    const zone = await submit(member, `${base}/preferences`, {
      [field("notify_questions")]: "on",
      [field("timeZone")]: "Mars/Olympus_Mons",
    });
    expect(zone.status).toBe(422);
    expect(fieldError(zone.html, field("timeZone"))).toMatch(/not an IANA time zone/);
    const saved = await submit(member, `${base}/preferences`, {
      [field("notify_questions")]: "on",
      [field("notify_mentions")]: "on",
      [field("quietStart")]: "22:00",
      [field("quietEnd")]: "07:00",
      [field("timeZone")]: "Europe/Berlin",
    });
    expect(saved.status).toBe(303);
    const row = await env.DB.prepare(
      "SELECT notify, quiet_start_minute AS s, quiet_end_minute AS e, time_zone AS z FROM line_members WHERE company_id = ? AND user_id = ?",
    )
      .bind(line.company.id, member.userId)
      .first();
    expect(row).toEqual({ notify: '["questions","mentions"]', s: 22 * 60, e: 7 * 60, z: "Europe/Berlin" });
    const after = await browse(member, "/phone");
    expect(checkbox(after.html, field("notify_mentions"))).toMatch(/\schecked/);
    expect(checkbox(after.html, field("notify_digest"))).not.toMatch(/\schecked/);

    expect((await submit(member, `${base}/unlink`)).status).toBe(303);
    expect(textOf((await browse(member, "/phone")).html)).toContain(
      `WhatsApp: ${line.company.name} No number linked`,
    );
  });
});
