// Issue 25 M-a: a live socket ends when its holder's access ends. Removing a member, revoking an agent
// key, revoking a user's API key and signing out close the affected board and issue sockets within a
// second, and they carry nothing of the next change; a role change closes them with 4205 so open pages
// redraw for the new role (every role reads all the feed carries, so the new socket is the same feed).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Link } from "../../fake-bridge";
import { BASE, call } from "../../helpers";
import { boardUser, seedAgent, seedCompany, seedIssue } from "../helpers";
import { joinAs } from "../members/fixtures";
import { events, listen, open, signedInOwner } from "./sockets";

/** The bound the issue sets: a revoked holder's socket is closed this soon after the revocation answered. */
const CUT_WITHIN_MS = 1_000;

async function rename(headers: Record<string, string>, issueId: string, title: string): Promise<void> {
  const res = await call("PATCH", `/api/issues/${issueId}`, { headers, body: { title } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The next change reached a socket that still may listen, and none of the cut sockets saw it. */
async function expectOnlyWitnessHears(witness: Link, cut: Link[], title: string): Promise<void> {
  await witness.next((f) => f.title === title);
  for (const link of cut) expect(JSON.stringify(events(link))).not.toContain(title);
}

async function expectCut(link: Link, code: number, reason: RegExp): Promise<void> {
  const closed = await link.closedWith(CUT_WITHIN_MS);
  expect(closed.code).toBe(code);
  expect(closed.reason).toMatch(reason);
}

async function team() {
  const owner = await boardUser();
  const company = await seedCompany(owner);
  const issue = await seedIssue(company, { status: "todo" });
  const witness = await listen(`/api/companies/${company.id}/events`, owner.headers);
  return { owner, company, issue, witness };
}

describe("live sockets end with access (issue 25 M-a)", () => {
  it("removing a member closes their board and issue sockets at once (4403)", async () => {
    const { owner, company, issue, witness } = await team();
    const member = await joinAs(company, "member");
    const board = await listen(`/api/companies/${company.id}/events`, member.headers);
    const page = await listen(`/api/issues/${issue.id}/events`, member.headers);

    const removed = await call("DELETE", `/api/companies/${company.id}/members/${member.userId}`, {
      headers: owner.headers,
    });
    expect(removed.status).toBe(204);
    await expectCut(board, 4403, /membership/i);
    await expectCut(page, 4403, /membership/i);
    await rename(owner.headers, issue.id, "Acquisition of Initech");
    await expectOnlyWitnessHears(witness, [board, page], "Acquisition of Initech");
    // And a fresh socket is refused like any outsider's.
    const again = await call("GET", `/api/companies/${company.id}/events`, {
      headers: { ...member.headers, Upgrade: "websocket" },
    });
    expect(again.status).toBe(404);
    witness.socket.close(1000, "done");
  });

  it("a member who leaves is cut too; the company's other members keep listening", async () => {
    const { owner, company, issue, witness } = await team();
    const leaver = await joinAs(company, "viewer");
    const stayer = await joinAs(company, "member");
    const leaving = await listen(`/api/issues/${issue.id}/events`, leaver.headers);
    const staying = await listen(`/api/issues/${issue.id}/events`, stayer.headers);
    const left = await call("DELETE", `/api/companies/${company.id}/members/${leaver.userId}`, {
      headers: leaver.headers,
    });
    expect(left.status).toBe(204);
    await expectCut(leaving, 4403, /membership/i);
    await rename(owner.headers, issue.id, "Layoffs in Q3");
    await expectOnlyWitnessHears(staying, [leaving], "Layoffs in Q3");
    expect(staying.closed).toBeNull();
    staying.socket.close(1000, "done");
    witness.socket.close(1000, "done");
  });

  it("revoking an agent key closes the agent's sockets (4401)", async () => {
    const { owner, company, issue, witness } = await team();
    const agent = await seedAgent(company.id);
    const board = await listen(`/api/companies/${company.id}/events`, agent.headers);
    const page = await listen(`/api/issues/${issue.id}/events`, agent.headers);
    const keys = await call<{ id: string }[]>("GET", `/api/agents/${agent.id}/keys`, {
      headers: owner.headers,
    });
    expect(keys.status).toBe(200);
    const keyId = keys.body[0]?.id;
    const revoked = await call("DELETE", `/api/agents/${agent.id}/keys/${keyId}`, { headers: owner.headers });
    expect(revoked.status).toBe(200);
    await expectCut(board, 4401, /credentials/i);
    await expectCut(page, 4401, /credentials/i);
    await rename(owner.headers, issue.id, "Agent fired");
    await expectOnlyWitnessHears(witness, [board, page], "Agent fired");
    witness.socket.close(1000, "done");
  });

  it("revoking a user's API key and signing out close the sockets each opened (4401)", async () => {
    const { owner, company, issue, witness } = await team();
    const member = await joinAs(company, "member");
    const byKey = await listen(`/api/companies/${company.id}/events`, member.headers);
    const revoked = await call("DELETE", "/api/user/api-key", { headers: member.headers });
    expect(revoked.status).toBe(200);
    await expectCut(byKey, 4401, /credentials/i);

    const web = await signedInOwner();
    await joinAs(company, "member", web);
    const byCookie = await listen(`/api/issues/${issue.id}/events`, web.cookieHeaders);
    const signedOut = await call("POST", "/api/auth/logout", { headers: web.cookieHeaders });
    expect(signedOut.status).toBe(200);
    await expectCut(byCookie, 4401, /credentials/i);
    await rename(owner.headers, issue.id, "Quiet merger");
    await expectOnlyWitnessHears(witness, [byKey, byCookie], "Quiet merger");
    witness.socket.close(1000, "done");
  });

  it("a socket whose upgrade passed on a remembered membership is closed once it opens (4403)", async () => {
    const { company, issue, witness } = await team();
    const member = await joinAs(company, "member");
    // A read makes this isolate remember the membership for a second (MEMBERSHIP_TTL_MS) ...
    expect((await call("GET", `/api/issues/${issue.id}`, { headers: member.headers })).status).toBe(200);
    // ... and the membership ends behind its back (as in another isolate): the upgrade may pass on it.
    await env.DB.prepare("DELETE FROM company_memberships WHERE company_id = ? AND user_id = ?")
      .bind(company.id, member.userId)
      .run();
    const res = await open(`/api/issues/${issue.id}/events`, { ...member.headers, Origin: BASE });
    if (res.status === 101) {
      const late = new Link(res.webSocket as WebSocket);
      await expectCut(late, 4403, /membership/i);
    } else expect(res.status).toBe(404); // the remembered answer had already expired
    witness.socket.close(1000, "done");
  });

  it("a role change closes the member's sockets (4205) so their pages redraw; as viewer they read it all", async () => {
    const { owner, company, issue, witness } = await team();
    const member = await joinAs(company, "owner");
    const board = await listen(`/api/companies/${company.id}/events`, member.headers);
    const changed = await call("PATCH", `/api/companies/${company.id}/members/${member.userId}`, {
      headers: owner.headers,
      body: { role: "viewer" },
    });
    expect(changed.status).toBe(200);
    // The page was drawn with an owner's controls: it is told to reload for the new role.
    await expectCut(board, 4205, /role changed/i);
    const again = await listen(`/api/companies/${company.id}/events`, member.headers);
    await rename(owner.headers, issue.id, "Still visible to viewers");
    await again.next((f) => f.title === "Still visible to viewers");
    expect(again.closed).toBeNull();
    // Setting the role it already has changes nothing and cuts nothing.
    const same = await call("PATCH", `/api/companies/${company.id}/members/${member.userId}`, {
      headers: owner.headers,
      body: { role: "viewer" },
    });
    expect(same.status).toBe(200);
    await rename(owner.headers, issue.id, "Same role, same socket");
    await again.next((f) => f.title === "Same role, same socket");
    expect(again.closed).toBeNull();
    again.socket.close(1000, "done");
    witness.socket.close(1000, "done");
  });
});
