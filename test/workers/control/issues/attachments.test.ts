// Issue attachments: upload (multipart `file`) into R2 with size and type limits, list, download with
// the issue's permissions, delete; deleting the issue removes the stored bytes too.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { seedIssue } from "../helpers";
import { type ErrorBody, world } from "./fixtures";

interface Attachment {
  id: string;
  issueId: string;
  filename: string;
  contentType: string;
  byteSize: number;
  createdByUserId: string | null;
  createdByAgentId: string | null;
  downloadPath: string;
}

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);

function form(bytes: Uint8Array | string, type: string, name = "file.bin"): FormData {
  const data = new FormData();
  data.append("file", new File([bytes], name, { type }));
  return data;
}

const upload = (headers: Record<string, string>, issueId: string, body: BodyInit) =>
  call<Attachment & ErrorBody>("POST", `/api/issues/${issueId}/attachments`, { headers, rawBody: body });

const storedRows = async (issueId: string) =>
  (
    await env.DB.prepare("SELECT r2_key FROM issue_attachments WHERE issue_id = ?")
      .bind(issueId)
      .all<{ r2_key: string }>()
  ).results;

describe("issue attachments", () => {
  it("stores, lists and serves a file to anyone who sees the issue", async () => {
    const { owner, company, engineer } = await world();
    const issue = await seedIssue(company);
    const res = await upload(
      engineer.headers,
      issue.id,
      form("# Notes\nhello", "text/markdown", "../notes.md"),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      issueId: issue.id,
      filename: "notes.md",
      contentType: "text/markdown",
      byteSize: 13,
      createdByAgentId: engineer.id,
    });
    const image = await upload(owner.headers, issue.identifier, form(PNG, "image/png", "shot.png"));
    expect(image.status).toBe(201);
    const list = await call<Attachment[]>("GET", `/api/issues/${issue.id}/attachments`, {
      headers: owner.headers,
    });
    expect(list.body.map((a) => a.filename)).toEqual(["notes.md", "shot.png"]);
    const [row] = await storedRows(issue.id);
    expect(await env.ASSETS.get(row?.r2_key ?? "")).not.toBeNull();
    const download = await call<string>("GET", res.body.downloadPath, { headers: owner.headers });
    expect(download.status).toBe(200);
    expect(download.body).toBe("# Notes\nhello");
    expect(download.headers.get("content-type")).toBe("text/markdown");
    expect(download.headers.get("content-disposition")).toContain("attachment");
    expect(download.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("refuses wrong types, lying images, empty and oversized files, writing nothing", async () => {
    const { owner, company } = await world();
    const issue = await seedIssue(company);
    expect((await upload(owner.headers, issue.id, form("<html>", "text/html"))).status).toBe(415);
    expect((await upload(owner.headers, issue.id, form("not a png", "image/png"))).status).toBe(400);
    expect(
      (await upload(owner.headers, issue.id, form(new Uint8Array([0xff, 0xfe, 0xfd]), "text/plain"))).status,
    ).toBe(400);
    expect((await upload(owner.headers, issue.id, form("", "text/plain"))).status).toBe(400);
    const big = new Uint8Array(10 * 1024 * 1024 + 1).fill(97);
    const tooBig = await upload(owner.headers, issue.id, form(big, "text/plain"));
    expect(tooBig.status).toBe(413);
    expect((await upload(owner.headers, issue.id, JSON.stringify({ file: "x" }))).status).toBe(415);
    expect(await storedRows(issue.id)).toEqual([]);
  });

  it("answers 404 to other companies and for unknown ids; deletes with the issue, or by board or uploader", async () => {
    const { owner, company, engineer, peer } = await world();
    const outsider = await world();
    const issue = await seedIssue(company);
    const res = await upload(engineer.headers, issue.id, form("data", "text/plain", "a.txt"));
    expect((await upload(outsider.owner.headers, issue.id, form("x", "text/plain"))).status).toBe(404);
    expect((await call("GET", res.body.downloadPath, { headers: outsider.owner.headers })).status).toBe(404);
    expect(
      (
        await call("GET", `/api/issues/${issue.id}/attachments/${crypto.randomUUID()}/content`, {
          headers: owner.headers,
        })
      ).status,
    ).toBe(404);
    const path = `/api/issues/${issue.id}/attachments/${res.body.id}`;
    expect((await call("DELETE", path, { headers: peer.headers })).status).toBe(403);
    expect((await call("DELETE", path, { headers: engineer.headers })).status).toBe(204);
    expect(await storedRows(issue.id)).toEqual([]);
    const again = await upload(owner.headers, issue.id, form("more", "text/plain", "b.txt"));
    const [row] = await storedRows(issue.id);
    expect(again.status).toBe(201);
    expect((await call("DELETE", `/api/issues/${issue.id}`, { headers: owner.headers })).status).toBe(204);
    expect(await env.ASSETS.get(row?.r2_key ?? "")).toBeNull();
  });
});
