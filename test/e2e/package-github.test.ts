// A `github` package source end to end: the real stack with GITHUB_API_URL pointed at a local server
// that answers like GitHub's archive endpoint (302 from /repos/{owner}/{repo}/tarball/{ref} to a
// codeload URL serving a gzip tarball with a pax global header, everything under
// "<owner>-<repo>-<sha>/"). The import preview must read the package through it; a missing
// repository must be a 400 saying so.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient } from "../support/api.ts";
import { type Stack, startStack } from "../support/stack.ts";

/** A package written by hand in the documented layout. */
const PACKAGE: Record<string, string> = {
  "COMPANY.md": "---\nschema: agentcompanies/v1\nname: Acme Packages\n---\nAcme ships packages.\n",
  "agents/lead/AGENTS.md": "---\nname: Lead\nrole: ceo\n---\nYou lead Acme. Keep the board informed.\n",
  ".switchboard.yaml":
    "schema: switchboard/v1\nagents:\n  lead:\n    role: ceo\n    title: Chief Executive\n",
};
const TOP_DIR = "acme-pkg-abc123";

function putText(block: Buffer, offset: number, text: string): void {
  block.write(text, offset, "utf8");
}

/** One ustar header, built here independently of the worker's writer. */
function header(name: string, size: number, type: string): Buffer {
  const block = Buffer.alloc(512);
  putText(block, 0, name);
  putText(block, 100, type === "5" ? "0000755\0" : "0000644\0");
  putText(block, 108, "0000000\0");
  putText(block, 116, "0000000\0");
  putText(block, 124, `${size.toString(8).padStart(11, "0")}\0`);
  putText(
    block,
    136,
    `${Math.floor(Date.now() / 1000)
      .toString(8)
      .padStart(11, "0")}\0`,
  );
  block.fill(0x20, 148, 156);
  putText(block, 156, type);
  putText(block, 257, "ustar\u000000");
  let sum = 0;
  for (const byte of block) sum += byte;
  putText(block, 148, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

function entry(name: string, content: string, type = "0"): Buffer[] {
  const data = Buffer.from(content, "utf8");
  return [header(name, data.length, type), data, Buffer.alloc((512 - (data.length % 512)) % 512)];
}

/** The tarball as GitHub's codeload serves it. */
function githubTarball(): Buffer {
  const comment = "52 comment=abc123abc123abc123abc123abc123abc123abc1\n";
  const parts = [...entry("pax_global_header", comment, "g"), ...entry(`${TOP_DIR}/`, "", "5")];
  for (const [path, text] of Object.entries(PACKAGE)) parts.push(...entry(`${TOP_DIR}/${path}`, text));
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

interface Mimic {
  server: Server;
  port: number;
  requests: { url: string; accept?: string; userAgent?: string }[];
}

/** /repos/acme/pkg/tarball/HEAD → 302 → /codeload/acme/pkg/tar.gz/HEAD → the tarball; else 404. */
async function startGithubMimic(): Promise<Mimic> {
  const tarball = githubTarball();
  const requests: Mimic["requests"] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push({ url: req.url ?? "", accept: req.headers.accept, userAgent: req.headers["user-agent"] });
    if (req.url === "/repos/acme/pkg/tarball/HEAD") {
      res.writeHead(302, { location: "/codeload/acme/pkg/tar.gz/HEAD" }).end();
    } else if (req.url === "/codeload/acme/pkg/tar.gz/HEAD") {
      res
        .writeHead(200, { "content-type": "application/x-gzip", "content-length": tarball.length })
        .end(tarball);
    } else {
      res.writeHead(404, { "content-type": "application/json" }).end('{"message":"Not Found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, requests };
}

interface PlanEntry {
  action: string;
  slug: string;
  name: string;
}
interface Preview {
  plan: { company: PlanEntry; agents: PlanEntry[] };
}

let mimic: Mimic;
let stack: Stack;
let board: ApiClient;
let companyId: string;

beforeAll(async () => {
  mimic = await startGithubMimic();
  stack = await startStack({ env: { BRIDGE: "0", GITHUB_API_URL: `http://127.0.0.1:${mimic.port}` } });
  board = await adminClient(stack.baseUrl);
  const company = await board.call<{ id: string }>("POST", "/api/companies", { name: "Package source" });
  expect(company.status, JSON.stringify(company.body)).toBe(201);
  companyId = company.body.id;
});

afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => mimic?.server.close(resolve));
});

const preview = (url: string) =>
  board.call<Preview & { error?: string }>("POST", `/api/companies/${companyId}/imports/preview`, {
    source: { type: "github", url },
    target: { mode: "new_company", newCompanyName: "Imported" },
  });

describe("github package source", () => {
  it("previews an import of a repository served through the GitHub archive endpoint", async () => {
    const response = await preview("https://github.com/acme/pkg");
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.plan.agents.map((agent) => agent.slug)).toEqual(["lead"]);
    expect(response.body.plan.agents[0]?.action).toBe("create");
    expect(mimic.requests.map((r) => r.url)).toEqual([
      "/repos/acme/pkg/tarball/HEAD",
      "/codeload/acme/pkg/tar.gz/HEAD",
    ]);
    expect(mimic.requests[0]?.accept).toBe("application/vnd.github+json");
    expect(mimic.requests[0]?.userAgent).toBe("switchboard");
  });

  it("answers 400 naming a repository or ref GitHub does not have", async () => {
    const missing = await preview("https://github.com/acme/missing");
    expect(missing.status).toBe(400);
    expect(missing.body.error).toContain("not found");
    const badRef = await preview("https://github.com/acme/pkg/tree/nope");
    expect(badRef.status).toBe(400);
    expect(badRef.body.error).toContain("GitHub repository or ref not found: acme/pkg@nope");
  });

  it("answers 400 for a URL that is not a GitHub repository", async () => {
    const response = await preview("https://example.com/acme/pkg");
    expect(response.status).toBe(400);
    expect(response.body.error).toContain("GitHub source must be");
  });
});
