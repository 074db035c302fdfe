// The projects and goals page in workerd: the projects table, the goal tree, and both forms with
// success and bad input next to the field (the goal form's renamed fields included).
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, fieldError, submit, textOf } from "./helpers";

interface Goal {
  id: string;
  title: string;
  level: string;
  parentId: string | null;
}

let owner: Session;
let stranger: Session;
let companyId: string;

const goals = async () =>
  (await call<Goal[]>("GET", `/api/companies/${companyId}/goals`, { headers: asSession(owner) })).body;
const projects = async () =>
  (
    await call<Array<{ name: string; goalIds: string[] }>>("GET", `/api/companies/${companyId}/projects`, {
      headers: asSession(owner),
    })
  ).body;

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Plans Co ${crypto.randomUUID().slice(0, 6)}` },
  });
  companyId = company.body.id;
});

describe("projects and goals page", () => {
  it("creates goals as a tree and a project under a goal", async () => {
    const top = await submit(owner, `/companies/${companyId}/goals`, {
      title: "Grow revenue",
      goalStatus: "active",
    });
    expect(top.status).toBe(303);
    const parent = (await goals()).find((goal) => goal.title === "Grow revenue");
    expect(parent?.level).toBe("company");
    const child = await submit(owner, `/companies/${companyId}/goals`, {
      title: "Launch in Spain",
      parentId: parent?.id ?? "",
      goalDescription: "Q3",
      goalStatus: "planned",
    });
    expect(child.status).toBe(303);
    expect((await goals()).find((goal) => goal.title === "Launch in Spain")).toMatchObject({
      parentId: parent?.id,
      level: "team",
    });

    const made = await submit(owner, `/companies/${companyId}/projects`, {
      name: "Website",
      description: "The public site",
      status: "active",
      goalId: parent?.id ?? "",
      leadAgentId: "",
    });
    expect(made.status).toBe(303);
    expect((await projects())[0]).toMatchObject({ name: "Website", goalIds: [parent?.id] });

    const page = await browse(owner, `/companies/${companyId}/projects`);
    expect(page.status).toBe(200);
    const tree = page.html.match(/<ul class="tree" aria-label="Goals by parent">[\s\S]*<\/ul>/)?.[0] ?? "";
    expect(textOf(tree)).toBe("Grow revenue company active Delete Launch in Spain team planned Delete");
    expect(tree).toMatch(/Grow revenue[\s\S]*<ul>[\s\S]*Launch in Spain/);
    expect(textOf(page.html)).toContain("Website The public site active Grow revenue");
  });

  it("shows an empty project name next to its field and creates nothing", async () => {
    const before = (await projects()).length;
    const bad = await submit(owner, `/companies/${companyId}/projects`, { name: " ", status: "active" });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "name")).toBeTruthy();
    const foreign = await submit(owner, `/companies/${companyId}/projects`, {
      name: "Elsewhere",
      goalId: "goal-of-nobody",
    });
    expect(foreign.status).toBe(422);
    expect(fieldError(foreign.html, "goalId")).toBeTruthy();
    expect((await projects()).length).toBe(before);
  });

  it("shows a goal level above its parent's next to the level, and a missing title next to the title", async () => {
    const before = (await goals()).length;
    const parent = (await goals()).find((goal) => goal.title === "Launch in Spain");
    const wrongLevel = await submit(owner, `/companies/${companyId}/goals`, {
      title: "Too high",
      parentId: parent?.id ?? "",
      level: "company",
      goalStatus: "active",
    });
    expect(wrongLevel.status).toBe(422);
    expect(fieldError(wrongLevel.html, "level")).toContain("below its parent's");
    const noTitle = await submit(owner, `/companies/${companyId}/goals`, { title: "", goalStatus: "active" });
    expect(noTitle.status).toBe(400);
    expect(fieldError(noTitle.html, "title")).toBeTruthy();
    const badStatus = await submit(owner, `/companies/${companyId}/goals`, {
      title: "X",
      goalStatus: "bogus",
    });
    expect(badStatus.status).toBe(400);
    expect(fieldError(badStatus.html, "goalStatus")).toBeTruthy();
    expect((await goals()).length).toBe(before);
  });

  it("answers another user with 404 and creates nothing for them", async () => {
    expect((await browse(stranger, `/companies/${companyId}/projects`)).status).toBe(404);
    const before = (await goals()).length;
    expect((await submit(stranger, `/companies/${companyId}/goals`, { title: "Sneaky" })).status).toBe(404);
    expect((await goals()).length).toBe(before);
  });
});
