import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call } from "../../helpers";
import { boardUser } from "../helpers";
import { HAND_WRITTEN, packageTenant, tableCounts } from "./fixtures";

type ErrorBody = { error: string };

const withFiles = (changes: Record<string, string | null>) => {
  const files: Record<string, string> = { ...HAND_WRITTEN };
  for (const [path, text] of Object.entries(changes)) {
    if (text === null) delete files[path];
    else files[path] = text;
  }
  return files;
};

const yamlWith = (extra: string) => `${HAND_WRITTEN[".switchboard.yaml"]}${extra}`;

const REJECTED: Array<[string, Record<string, unknown>, RegExp]> = [
  [
    "bad YAML",
    { files: withFiles({ ".switchboard.yaml": "schema: switchboard/v1\nagents: [unclosed\n" }) },
    /\.switchboard\.yaml: invalid YAML/,
  ],
  ["missing COMPANY.md", { files: withFiles({ "COMPANY.md": null }) }, /COMPANY\.md is missing/],
  [
    "an extension entry whose file is missing",
    { files: withFiles({ "projects/app/PROJECT.md": null }) },
    /projects\/app\/PROJECT\.md is missing/,
  ],
  [
    "a listed document that is missing",
    {
      files: withFiles({
        "tasks/first/documents/notes.md": null,
        ".switchboard.yaml":
          HAND_WRITTEN[".switchboard.yaml"]?.replace(
            "    priority: high\n",
            "    priority: high\n    documents: [notes]\n",
          ) ?? "",
      }),
    },
    /documents\/notes\.md is missing/,
  ],
  [
    "an unknown reportsTo agent",
    {
      files: withFiles({
        ".switchboard.yaml":
          HAND_WRITTEN[".switchboard.yaml"]?.replace("reportsTo: boss", "reportsTo: ghost") ?? "",
      }),
    },
    /agents\.dev\.reportsTo: unknown agent .*ghost/,
  ],
  [
    "an unknown task assignee",
    { files: withFiles({ "tasks/first/TASK.md": "---\nname: First\nassignee: nobody\n---\n" }) },
    /tasks\.first\.assignee: unknown agent .*nobody/,
  ],
  [
    "a reporting cycle",
    {
      files: withFiles({
        ".switchboard.yaml": yamlWith("").replace("agents:\n", "agents:\n  boss:\n    reportsTo: dev\n"),
      }),
    },
    /reporting lines form a cycle/,
  ],
  [
    "a bad cron",
    {
      files: withFiles({
        ".switchboard.yaml": HAND_WRITTEN[".switchboard.yaml"]?.replace("0 9 * * *", "61 9 * * *") ?? "",
      }),
    },
    /routines\.standup\.triggers\.0/,
  ],
  [
    "an unknown extension field",
    { files: withFiles({ ".switchboard.yaml": yamlWith("colour: red\n") }) },
    /Unrecognized key/i,
  ],
  ["path traversal", { files: withFiles({ "../evil.md": "x" }) }, /\.\./],
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe("company package import rejections", () => {
  it.each(REJECTED)("%s → 400 naming the problem, nothing written", async (_label, source, message) => {
    const t = await packageTenant();
    const before = await tableCounts();
    for (const path of ["preview", "apply"]) {
      const res = await call<ErrorBody>("POST", `/api/companies/${t.company.id}/imports/${path}`, {
        headers: t.board.headers,
        body: { source: { type: "inline", ...source }, target: { mode: "new_company" } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(message);
    }
    expect(await tableCounts()).toEqual(before);
  });

  it("an oversize archive from a url source → 400, nothing written", async () => {
    const t = await packageTenant();
    const before = await tableCounts();
    const oversize = 10 * 1024 * 1024 + 1;
    vi.spyOn(globalThis, "fetch").mockImplementation(
      async () => new Response(new Uint8Array(1024), { headers: { "content-length": String(oversize) } }),
    );
    for (const path of ["preview", "apply"]) {
      const res = await call<ErrorBody>("POST", `/api/companies/${t.company.id}/imports/${path}`, {
        headers: t.board.headers,
        body: {
          source: { type: "url", url: "http://127.0.0.1:9/pkg.tar.gz" },
          target: { mode: "new_company" },
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toMatch(/larger than/);
    }
    expect(await tableCounts()).toEqual(before);
  });

  it('collisionStrategy "replace" is refused as unsafe, nothing written', async () => {
    const t = await packageTenant();
    const before = await tableCounts();
    const res = await call<ErrorBody>("POST", `/api/companies/${t.company.id}/imports/apply`, {
      headers: t.board.headers,
      body: {
        source: { type: "inline", files: HAND_WRITTEN },
        target: { mode: "existing_company", companyId: t.company.id },
        collisionStrategy: "replace",
      },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("unsafe");
    expect(await tableCounts()).toEqual(before);
  });
});

describe("company package import atomicity", () => {
  it("a write failing late in the batch leaves no partial company behind", async () => {
    const t = await packageTenant();
    // Make the database refuse one document, which is written after the company, agents and issues.
    await env.DB.exec(
      "CREATE TRIGGER refuse_boom BEFORE INSERT ON issue_documents WHEN NEW.key = 'boom' BEGIN SELECT RAISE(ABORT, 'refused'); END;",
    );
    try {
      const before = await tableCounts();
      const files = withFiles({ "tasks/first/documents/boom.md": "late failure" });
      const res = await call("POST", `/api/companies/${t.company.id}/imports/apply`, {
        headers: t.board.headers,
        body: { source: { type: "inline", files }, target: { mode: "new_company" } },
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(await tableCounts()).toEqual(before);
    } finally {
      await env.DB.exec("DROP TRIGGER refuse_boom;");
    }
  });
});

describe("company package permissions", () => {
  // HAND_WRITTEN brings its CEO: among board users only an owner imports that (issue 25).
  const routes = () =>
    [
      ["exports/preview", {}, 200],
      [
        "imports/preview",
        { source: { type: "inline", files: HAND_WRITTEN }, target: { mode: "new_company" } },
        403,
      ],
    ] as const;

  it("board owner 200, member 200 (403 for a package bringing a CEO), CEO agent 200, other agent 403, outsider 404", async () => {
    const t = await packageTenant();
    const outsider = await boardUser();
    const stranger = (await packageTenant()).ceo; // the CEO of another company
    for (const [path, body, forMember] of routes()) {
      const url = `/api/companies/${t.company.id}/${path}`;
      expect((await call("POST", url, { headers: t.board.headers, body })).status).toBe(200);
      expect((await call("POST", url, { headers: t.member.headers, body })).status).toBe(forMember);
      expect((await call("POST", url, { headers: t.ceo.headers, body })).status).toBe(200);
      expect((await call("POST", url, { headers: t.engineer.headers, body })).status).toBe(403);
      expect((await call("POST", url, { headers: outsider.headers, body })).status).toBe(404);
      expect((await call("POST", url, { headers: stranger.headers, body })).status).toBe(404);
    }
  });

  it("the CEO agent may apply into its own company; an existing_company target elsewhere is 404", async () => {
    const t = await packageTenant();
    const other = await packageTenant();
    const before = await tableCounts();
    const foreign = await call("POST", `/api/companies/${t.company.id}/imports/apply`, {
      headers: t.board.headers,
      body: {
        source: { type: "inline", files: HAND_WRITTEN },
        target: { mode: "existing_company", companyId: other.company.id },
      },
    });
    expect(foreign.status).toBe(404);
    expect(await tableCounts()).toEqual(before);
    const own = await call<{ created: Record<string, number> }>(
      "POST",
      `/api/companies/${t.company.id}/imports/apply`,
      {
        headers: t.ceo.headers,
        body: {
          source: { type: "inline", files: HAND_WRITTEN },
          target: { mode: "existing_company", companyId: t.company.id },
        },
      },
    );
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    expect(own.body.created.agents).toBe(2);
  });
});
