// Issue 25 (Lows): the bot's `removeBgApiKey` (a third party's credential) is encrypted at rest, never
// answered back (responses say only whether one is set), never copied to the session's Durable Object,
// never logged; keys stored in plaintext before are sealed by the cron.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { open } from "../../../../workers/auth/secret-box";
import { type OwnedSession, ownedSession } from "../../connected-session";
import { asKey, call, scheduledTick } from "../../helpers";

const KEY = "rbgPlainKey7Q4xZ9";

const storedKey = async (s: OwnedSession) =>
  env.DB.prepare("SELECT remove_bg_api_key AS k FROM bot_configs WHERE session_id = ?")
    .bind(s.id)
    .first<string | null>("k");

/** The session object's stored config copy, as text. */
const objectCopy = (s: OwnedSession) =>
  runInDurableObject(env.SESSION.getByName(s.id), (_, state) =>
    state.storage.sql
      .exec<{ value: string }>("SELECT value FROM config WHERE k = 1")
      .toArray()
      .map((row) => row.value)
      .join(""),
  );

const setKey = (s: OwnedSession, removeBgApiKey: string | null) =>
  call<{ data: Record<string, unknown> }>("POST", `/api/sessions/${s.slug}/bot-config`, {
    headers: asKey(s.key),
    body: { removeBgApiKey },
  });

/** Every answer that shows a bot config: none may carry the key. */
async function everyRead(s: OwnedSession): Promise<string> {
  const reads = await Promise.all([
    call("GET", `/api/sessions/${s.slug}/bot-config`, { headers: asKey(s.key) }),
    call("GET", `/api/sessions/${s.slug}`, { headers: asKey(s.key) }),
    call("GET", "/api/sessions", { headers: asKey(s.key) }),
  ]);
  for (const read of reads) expect(read.status).toBe(200);
  return JSON.stringify(reads.map((read) => read.body));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the bot's remove.bg key", () => {
  it("is stored sealed, answered only as set, kept out of the session object and out of the logs", async () => {
    const logged: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const)
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(args.map(String).join(" "));
      });
    const s = await ownedSession("remove.bg");
    const saved = await setKey(s, KEY);
    expect(saved.status).toBe(200);
    expect(saved.body.data).toMatchObject({ removeBgApiKey: "****", removeBgApiKeySet: true });
    expect(JSON.stringify(saved.body)).not.toContain(KEY.slice(-4));

    const stored = await storedKey(s);
    expect(stored).not.toBeNull();
    expect(stored).not.toContain(KEY);
    expect(stored).toMatch(/^v1\./);
    // Encrypted, not lost: it opens with the master key, bound to this session only.
    expect(await open(env.SECRETS_MASTER_KEY, stored ?? "", `remove-bg:${s.id}`)).toBe(KEY);
    await expect(open(env.SECRETS_MASTER_KEY, stored ?? "", "remove-bg:another-session")).rejects.toThrow();

    const reads = await everyRead(s);
    expect(reads).not.toContain(KEY);
    expect(reads).toContain('"removeBgApiKeySet":true');
    expect(await objectCopy(s)).not.toContain(KEY);
    expect(await objectCopy(s)).not.toContain("removeBgApiKey");
    expect(logged.filter((line) => line.includes(KEY))).toEqual([]);

    const cleared = await setKey(s, null);
    expect(cleared.body.data).toMatchObject({ removeBgApiKey: null, removeBgApiKeySet: false });
    expect(await storedKey(s)).toBeNull();
  });

  it("stored in plaintext before, is sealed by the cron and leaves the object's old copy", async () => {
    const s = await ownedSession("legacy remove.bg");
    expect((await setKey(s, "placeholder")).status).toBe(200);
    // As the code before sealing left things: the plaintext in D1 and in the object's copy.
    await env.DB.prepare("UPDATE bot_configs SET remove_bg_api_key = ? WHERE session_id = ?")
      .bind(KEY, s.id)
      .run();
    await runInDurableObject(env.SESSION.getByName(s.id), (_, state) => {
      const row = state.storage.sql
        .exec<{ value: string }>("SELECT value FROM config WHERE k = 1")
        .toArray()[0];
      const copy = JSON.parse(row?.value ?? "{}") as { bot: Record<string, unknown> };
      copy.bot.removeBgApiKey = KEY;
      state.storage.sql.exec("UPDATE config SET value = ? WHERE k = 1", JSON.stringify(copy));
    });
    expect(await everyRead(s)).not.toContain(KEY);

    await scheduledTick(Date.UTC(2030, 0, 1, 12, 1));
    const stored = await storedKey(s);
    expect(stored).not.toContain(KEY);
    expect(await open(env.SECRETS_MASTER_KEY, stored ?? "", `remove-bg:${s.id}`)).toBe(KEY);
    expect(await objectCopy(s)).not.toContain(KEY);
    expect(
      (await call<{ data: unknown }>("GET", `/api/sessions/${s.slug}/bot-config`, { headers: asKey(s.key) }))
        .body.data,
    ).toMatchObject({ removeBgApiKeySet: true });
  });
});
