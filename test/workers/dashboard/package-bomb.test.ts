import { beforeAll, expect, it } from "vitest";
import { MAX_INFLATED_BYTES } from "../../../workers/control/packages/archive";
import { gzipBomb } from "../control/packages/bombs";
import { asSession, call, count, createUser, type Session } from "../helpers";
import { slowestHealthWhile } from "../responsiveness";
import { fieldError, type PageResponse, submitMultipart } from "./helpers";

let owner: Session;
let viewer: Session;
let companyId: string;

beforeAll(async () => {
  owner = await createUser("OWNER");
  viewer = await createUser("OWNER");
  const created = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Bomb Co ${crypto.randomUUID().slice(0, 6)}`, requireBoardApprovalForNewAgents: false },
  });
  companyId = created.body.id;
  const invite = await call<{ token: string }>("POST", `/api/companies/${companyId}/member-invites`, {
    headers: asSession(owner),
    body: { role: "viewer" },
  });
  const joined = await call("POST", `/api/member-invites/${invite.body.token}/accept`, {
    headers: asSession(viewer),
  });
  expect(joined.status).toBeLessThan(300);
});

function upload(session: Session, file: File): Promise<PageResponse> {
  return submitMultipart(session, `/companies/${companyId}/package/import`, {
    targetMode: "new_company",
    packageFile: file,
  });
}

it("an upload of 960 MiB zeros in 1 MiB: 400 naming the limit by the file field, health within 1 s", async () => {
  // Under the page's 1 MiB form limit with the multipart framing around it.
  const bomb = gzipBomb({ name: "pkg/", type: "5", size: 960 * 1024 * 1024 }, 960);
  expect(bomb.length).toBeLessThan(1024 * 1024 - 4096);
  const file = new File([bomb], "bomb.tar.gz", { type: "application/gzip" });
  const before = await count("companies");
  // The viewer (who sees no import form) as the review did it: refused before the upload is unpacked.
  const refused = await slowestHealthWhile(upload(viewer, file));
  expect(refused.slowestMs).toBeLessThan(1000);
  expect(refused.result.status).toBe(403);
  expect(refused.result.html).toContain("you can read everything but change nothing");
  // An owner's upload is unpacked under the budget and refused by it.
  const { slowestMs, result } = await slowestHealthWhile(upload(owner, file));
  expect(slowestMs).toBeLessThan(1000);
  expect(result.status).toBe(400);
  expect(fieldError(result.html, "packageFile")).toBe(
    `Package archive inflates to more than ${MAX_INFLATED_BYTES} bytes`,
  );
  expect(await count("companies")).toBe(before);
});
