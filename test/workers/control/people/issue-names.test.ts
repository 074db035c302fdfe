// People by name everywhere an actor appears on an issue (issue 30): documents and their revisions,
// attachments and questions carry the display name of whoever created, asked or answered them, a
// person's or an agent's, resolved in one lookup per response; the write answers carry it too.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { boardUser } from "../helpers";
import { newIssue, world } from "../issues/fixtures";

const rename = (userId: string, name: string) =>
  env.DB.prepare("UPDATE users SET name = ? WHERE id = ?").bind(name, userId).run();

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);

async function team() {
  const ada = await boardUser();
  const { owner, company, engineer } = await world({ members: [ada] });
  await rename(ada.userId, "Ada Lovelace");
  const issue = await newIssue(owner.headers, company, { title: "Names", assigneeAgentId: engineer.id });
  return { owner, ada, company, engineer, issue };
}

interface Named {
  createdByName?: string | null;
  askedByName?: string | null;
  answeredByName?: string | null;
  latestRevisionId?: string;
  id: string;
}

describe("names on an issue's documents, attachments and questions", () => {
  it("a document and each revision name their author, person or agent", async () => {
    const { ada, engineer, issue } = await team();
    const path = `/api/issues/${issue.id}/documents/plan`;
    const created = await call<Named>("PUT", path, { headers: ada.headers, body: { body: "v1" } });
    expect(created.status).toBe(201);
    expect(created.body.createdByName).toBe("Ada Lovelace");
    const revised = await call<Named>("PUT", path, {
      headers: engineer.headers,
      body: { body: "v2", baseRevisionId: created.body.latestRevisionId },
    });
    expect(revised.status).toBe(200);
    expect(revised.body.createdByName).toBe("Ada Lovelace");
    const listed = await call<Named[]>("GET", `/api/issues/${issue.id}/documents`, { headers: ada.headers });
    expect(listed.body.map((doc) => doc.createdByName)).toEqual(["Ada Lovelace"]);
    expect((await call<Named>("GET", path, { headers: engineer.headers })).body.createdByName).toBe(
      "Ada Lovelace",
    );
    const revisions = await call<Named[]>("GET", `${path}/revisions`, { headers: ada.headers });
    expect(revisions.body.map((revision) => revision.createdByName)).toEqual([engineer.name, "Ada Lovelace"]);
  });

  it("an attachment names who attached it", async () => {
    const { ada, issue } = await team();
    const data = new FormData();
    data.append("file", new File([PNG], "shot.png", { type: "image/png" }));
    const stored = await call<Named>("POST", `/api/issues/${issue.id}/attachments`, {
      headers: ada.headers,
      rawBody: data,
    });
    expect(stored.status).toBe(201);
    expect(stored.body.createdByName).toBe("Ada Lovelace");
    const listed = await call<Named[]>("GET", `/api/issues/${issue.id}/attachments`, {
      headers: ada.headers,
    });
    expect(listed.body.map((file) => file.createdByName)).toEqual(["Ada Lovelace"]);
  });

  it("a question names who asked and who answered", async () => {
    const { ada, engineer, issue } = await team();
    const asked = await call<Named>("POST", `/api/issues/${issue.id}/questions`, {
      headers: engineer.headers,
      body: { body: "Which region?" },
    });
    expect(asked.status).toBe(201);
    expect(asked.body).toMatchObject({ askedByName: engineer.name, answeredByName: null });
    const answered = await call<Named>("POST", `/api/issues/${issue.id}/questions/${asked.body.id}/answer`, {
      headers: ada.headers,
      body: { answer: "Europe" },
    });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ askedByName: engineer.name, answeredByName: "Ada Lovelace" });
    const listed = await call<Named[]>("GET", `/api/issues/${issue.id}/questions`, { headers: ada.headers });
    expect(listed.body.map((q) => [q.askedByName, q.answeredByName])).toEqual([
      [engineer.name, "Ada Lovelace"],
    ]);
  });
});
