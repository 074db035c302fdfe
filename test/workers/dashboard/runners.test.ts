// The runners page in workerd: your runners, register (the token shown once, in that response only),
// revoke; bad input next to its field; another user's runner cannot be revoked (404).
import { beforeAll, describe, expect, it } from "vitest";
import { dialRunner } from "../control/runner-link";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, fieldError, submit, textOf } from "./helpers";

interface Runner {
  id: string;
  name: string;
  companyIds: string[];
  allCompanies: boolean;
  revokedAt: string | null;
}

let owner: Session;
let stranger: Session;
let companyId: string;

const runners = async (session = owner) =>
  (await call<Runner[]>("GET", "/api/runners", { headers: asSession(session) })).body;

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Runner Co ${crypto.randomUUID().slice(0, 6)}` },
  });
  companyId = company.body.id;
});

describe("runners page", () => {
  it("lists your companies to serve and registers a runner, showing its token once", async () => {
    const page = await browse(owner, "/runners");
    expect(page.status).toBe(200);
    expect(page.html).toContain(`name="companyIds:${companyId}"`);

    const created = await submit(owner, "/runners", { name: "laptop", [`companyIds:${companyId}`]: "on" });
    expect(created.status).toBe(200);
    const token = created.html.match(/id="new-runner-token" class="secret" readonly="" value="([^"]+)"/)?.[1];
    expect(token).toBeTruthy();
    const [runner] = await runners();
    expect(runner).toMatchObject({ name: "laptop", companyIds: [companyId], allCompanies: false });
    expect(textOf(created.html)).toContain("laptop");
    expect((await dialRunner(token ?? "")).status).toBe(101);

    const later = await browse(owner, "/runners");
    expect(later.html).not.toContain(token);
  });

  it("shows a missing name and no company next to their fields and registers nothing", async () => {
    const before = (await runners()).length;
    const noName = await submit(owner, "/runners", { name: "", allCompanies: "on" });
    expect(noName.status).toBe(400);
    expect(fieldError(noName.html, "name")).toBeTruthy();
    const noCompany = await submit(owner, "/runners", { name: "nowhere" });
    expect(noCompany.status).toBe(400);
    expect(fieldError(noCompany.html, "companyIds")).toContain("send either companyIds or allCompanies");
    expect((await runners()).length).toBe(before);
  });

  it("revokes a runner; another user can neither see nor revoke it", async () => {
    const [runner] = await runners();
    const denied = await submit(stranger, `/runners/${runner?.id}/revoke`);
    expect(denied.status).toBe(404);
    expect((await runners())[0]?.revokedAt).toBeNull();
    expect((await browse(stranger, "/runners")).html).not.toContain(`/runners/${runner?.id}/revoke`);

    const revoked = await submit(owner, `/runners/${runner?.id}/revoke`);
    expect(revoked.status).toBe(303);
    expect((await runners())[0]?.revokedAt).not.toBeNull();
    expect(textOf((await browse(owner, "/runners")).html)).toContain("revoked");
  });
});
