// The issue page names who wrote each document, attached each file and asked and answered each
// question (issue 30), with an initials avatar: another person by their name, the viewer as "You".
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, textOf } from "./helpers";

let owner: Session;
let ada: Session;
let companyId: string;

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);

beforeAll(async () => {
  owner = await createUser("OWNER");
  ada = await createUser("OWNER");
  await env.DB.prepare("UPDATE users SET name = ? WHERE id = ?").bind("Ada Lovelace", ada.userId).run();
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Bylines ${crypto.randomUUID().slice(0, 6)}` },
  });
  companyId = company.body.id;
  await env.DB.prepare(
    "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, 'member', ?)",
  )
    .bind(companyId, ada.userId, Date.now())
    .run();
});

/** The text of the page's section headed `heading` (its panel). */
function sectionText(html: string, id: string): string {
  const match = html.match(new RegExp(`<section[^>]*aria-labelledby="${id}"[\\s\\S]*?</section>`));
  return match ? textOf(match[0]) : "";
}

describe("bylines on the issue page", () => {
  it("names the document's author, the file's uploader and the question's asker and answerer", async () => {
    const issue = await call<{ id: string }>("POST", `/api/companies/${companyId}/issues`, {
      headers: asSession(owner),
      body: { title: "Who did what" },
    });
    const issueId = issue.body.id;
    const as = (who: Session) => ({ headers: asSession(who) });
    expect(
      (await call("PUT", `/api/issues/${issueId}/documents/plan`, { ...as(ada), body: { body: "Plan" } }))
        .status,
    ).toBe(201);
    const data = new FormData();
    data.append("file", new File([PNG], "shot.png", { type: "image/png" }));
    expect(
      (await call("POST", `/api/issues/${issueId}/attachments`, { ...as(ada), rawBody: data })).status,
    ).toBe(201);
    const asked = await call<{ id: string }>("POST", `/api/issues/${issueId}/questions`, {
      ...as(ada),
      body: { body: "Which region?" },
    });
    expect(
      (
        await call("POST", `/api/issues/${issueId}/questions/${asked.body.id}/answer`, {
          ...as(owner),
          body: { answer: "Europe" },
        })
      ).status,
    ).toBe(200);

    const page = await browse(owner, `/issues/${issueId}`);
    expect(page.status).toBe(200);
    expect(sectionText(page.html, "issue-documents")).toContain("AL Ada Lovelace wrote it");
    expect(sectionText(page.html, "issue-attachments")).toContain("AL Ada Lovelace");
    const questions = sectionText(page.html, "issue-questions");
    expect(questions).toContain("AL Ada Lovelace asked");
    expect(questions).toMatch(/You answered/);
    // Ada sees herself as "You" and the owner by name.
    const hers = await browse(ada, `/issues/${issueId}`);
    expect(sectionText(hers.html, "issue-documents")).toContain("You wrote it");
  });
});
