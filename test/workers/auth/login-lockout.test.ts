import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createUser, freshAddress, ROOT, rootSession, uniqueEmail } from "../helpers";
import { eventually } from "../patience";

/** A random IPv6 /64 of the documentation range: `2001:db8:xxxx:yyyy`. */
const randomNet = () => {
  const hextet = () => Math.floor(Math.random() * 0xffff).toString(16);
  return `2001:db8:${hextet()}:${hextet()}`;
};
/** The `i`-th address of a /64, spelled out in full as CF-Connecting-IP gives it. */
const inNet = (net: string, i: number) => `${net}:${(i + 1).toString(16)}:0:0:1`;

const attempt = (email: string, password: string, address: string) =>
  call<{ message?: string; data?: { securityNotices: Array<{ kind: string; message: string }> } }>(
    "POST",
    "/api/auth/login",
    { body: { email, password }, headers: { "CF-Connecting-IP": address } },
  );

async function lockoutEvents(userId: string): Promise<number> {
  const row = await env.DB.prepare(
    "SELECT count(*) AS n FROM account_events WHERE user_id = ? AND kind = 'login_locked'",
  )
    .bind(userId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** Guesses from new networks until the account's lockout is recorded (it takes one 1-s delay). */
async function guessUntilLocked(email: string, userId: string): Promise<void> {
  await eventually(async () => {
    await attempt(email, "wrong-password", inNet(randomNet(), 0));
    return (await lockoutEvents(userId)) > 0;
  });
}

describe("login lockout per account, whatever the source (issue 25 M-e)", () => {
  it("refuses 240 guesses from 240 addresses of one IPv6 /64 past the threshold, locks the account and tells its owner", async () => {
    const user = await createUser("STAFF", await rootSession());
    const net = randomNet();
    const statuses: number[] = [];
    for (let i = 0; i < 240; i++)
      statuses.push((await attempt(user.email, "wrong-password", inNet(net, i))).status);
    const checked = statuses.filter((status) => status === 401).length;
    expect(checked + statuses.filter((status) => status === 429).length).toBe(240);
    expect(checked).toBeLessThanOrEqual(10);

    await guessUntilLocked(user.email, user.userId);
    // Locked: the right password, from a network never seen, is refused without being checked.
    const refused = await attempt(user.email, user.password, inNet(randomNet(), 0));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(10 * 60);
    expect(refused.headers.get("set-cookie")).toBeNull();

    // The operator lifts the lock (docs/operations.md); the owner signs in and is told, once.
    await env.DB.prepare("DELETE FROM login_throttle WHERE key LIKE ?").bind(`%${user.email}%`).run();
    const signedIn = await attempt(user.email, user.password, inNet(randomNet(), 0));
    expect(signedIn.status).toBe(200);
    const notices = signedIn.body.data?.securityNotices ?? [];
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ kind: "login_locked" });
    expect(notices[0]?.message).toMatch(/locked for 15 minutes after \d+ failed attempts/);
    const again = await attempt(user.email, user.password, inNet(randomNet(), 0));
    expect(again.body.data?.securityNotices).toEqual([]);
  }, 60_000);

  it("locks an account guessed at from 240 different networks: at most a dozen guesses are checked", async () => {
    const user = await createUser("STAFF", await rootSession());
    const statuses: number[] = [];
    for (let i = 0; i < 240; i++)
      statuses.push((await attempt(user.email, "wrong-password", inNet(randomNet(), i))).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(20);
    await guessUntilLocked(user.email, user.userId);
    expect((await attempt(user.email, user.password, freshAddress())).status).toBe(429);
  }, 60_000);

  it("answers an unknown e-mail exactly as a known one: same statuses, same refusal", async () => {
    const user = await createUser("STAFF", await rootSession());
    const unknown = uniqueEmail("nobody");
    const run = async (email: string) => {
      const answers = [];
      for (let i = 0; i < 12; i++)
        answers.push(await attempt(email, "wrong-password", inNet(randomNet(), i)));
      return answers;
    };
    const known = await run(user.email);
    const stranger = await run(unknown);
    expect(stranger.map((answer) => answer.status)).toEqual(known.map((answer) => answer.status));
    expect(known.map((answer) => answer.status)).toEqual([...Array(11).fill(401), 429]);
    expect(stranger[11]?.body).toEqual(known[11]?.body);
  }, 60_000);

  it("a successful login resets the account's count", async () => {
    const user = await createUser("STAFF", await rootSession());
    for (let i = 0; i < 11; i++)
      expect((await attempt(user.email, "wrong-password", inNet(randomNet(), i))).status).toBe(401);
    // The 11th check delayed the account by 1 s; then the owner gets in, and the count starts over.
    await eventually(
      async () => (await attempt(user.email, user.password, inNet(randomNet(), 0))).status === 200,
    );
    for (let i = 0; i < 10; i++)
      expect((await attempt(user.email, "wrong-password", inNet(randomNet(), i))).status).toBe(401);
  }, 60_000);
});

describe("per-source throttling keys IPv6 by its /64 (issue 25 M-e)", () => {
  it("holds back a /64 after 20 failures across accounts from 20 of its addresses; another /64 is free", async () => {
    const net = randomNet();
    for (let i = 0; i < 21; i++)
      expect((await attempt(uniqueEmail("spray"), "wrong-password", inNet(net, i))).status).toBe(401);
    const blocked = await attempt(ROOT.email, ROOT.password, inNet(net, 99));
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await attempt(ROOT.email, ROOT.password, inNet(randomNet(), 0))).status).toBe(200);
  });

  it("still counts IPv4 clients by address, and an IPv4-mapped IPv6 address as that IPv4 address", async () => {
    const address = `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
    for (let i = 0; i < 21; i++) {
      const via = i % 2 === 0 ? address : `::ffff:${address}`;
      expect((await attempt(uniqueEmail("spray"), "wrong-password", via)).status).toBe(401);
    }
    expect((await attempt(ROOT.email, ROOT.password, address)).status).toBe(429);
    expect((await attempt(ROOT.email, ROOT.password, freshAddress())).status).toBe(200);
  });
});
