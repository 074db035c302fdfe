// A session's bot configuration is complete from the start: every field holds its real value (a new
// session gets its default configuration stored, as the reference does), and every answer that shows
// a session (create, list, detail, settings PATCH) carries that stored configuration, never null.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BOT_CONFIG_DEFAULTS } from "../../../../durable-objects/messaging/config/bot";
import { asKey, call, createUser, generateKey } from "../../helpers";

type Envelope<T> = { status: boolean; message: string; data: T; error?: string };
type BotConfig = Record<string, unknown>;
type Session = { id: string; sessionId: string; botConfig: BotConfig | null };

async function ownerWithSession() {
  const key = await generateKey(await createUser("OWNER"));
  const res = await call<Envelope<Session>>("POST", "/api/sessions", {
    body: { name: "Defaults line" },
    headers: asKey(key),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { key, session: res.body.data };
}

const { removeBgApiKey: _noKey, ...DEFAULT_VALUES } = BOT_CONFIG_DEFAULTS;

/** Every default with its value, the stored row's id and times, and the key shown as unset. */
function expectCompleteDefaults(config: BotConfig | null | undefined, sessionId: string) {
  expect(config).toMatchObject({
    ...DEFAULT_VALUES,
    sessionId,
    removeBgApiKey: null,
    removeBgApiKeySet: false,
  });
  expect(config?.id).toEqual(expect.any(String));
  expect(Date.parse(String(config?.createdAt))).not.toBeNaN();
  expect(Date.parse(String(config?.updatedAt))).not.toBeNaN();
}

describe("bot-config defaults and the session's botConfig", () => {
  it("a new session has its complete default configuration everywhere it is shown", async () => {
    const { key, session } = await ownerWithSession();
    expectCompleteDefaults(session.botConfig, session.sessionId);

    const got = await call<Envelope<BotConfig>>("GET", `/api/sessions/${session.sessionId}/bot-config`, {
      headers: asKey(key),
    });
    expect(got.status).toBe(200);
    expectCompleteDefaults(got.body.data, session.sessionId);
    expect(got.body.data).toEqual(session.botConfig);

    const detail = await call<Envelope<Session>>("GET", `/api/sessions/${session.sessionId}`, {
      headers: asKey(key),
    });
    expect(detail.body.data.botConfig).toEqual(got.body.data);
    const list = await call<Envelope<Session[]>>("GET", "/api/sessions", { headers: asKey(key) });
    expect(list.body.data[0]?.botConfig).toEqual(got.body.data);
  });

  it("the settings PATCH answers the session with its stored bot configuration", async () => {
    const { key, session } = await ownerWithSession();
    const set = await call<Envelope<BotConfig>>("POST", `/api/sessions/${session.sessionId}/bot-config`, {
      body: { botName: "Night shift", prefix: "!" },
      headers: asKey(key),
    });
    expect(set.status).toBe(200);
    const patched = await call<Envelope<Session & { config: Record<string, boolean> }>>(
      "PATCH",
      `/api/sessions/${session.sessionId}/settings`,
      { body: { config: { alwaysOnline: false } }, headers: asKey(key) },
    );
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data.config).toEqual({ alwaysOnline: false });
    expect(patched.body.data.botConfig).toEqual(set.body.data);
    expect(patched.body.data.botConfig).toMatchObject({ botName: "Night shift", prefix: "!" });
  });

  it("a session stored before defaults were saved shows the default values, not null", async () => {
    const { key, session } = await ownerWithSession();
    await env.DB.prepare("DELETE FROM bot_configs WHERE session_id = ?").bind(session.id).run();
    const detail = await call<Envelope<Session>>("GET", `/api/sessions/${session.sessionId}`, {
      headers: asKey(key),
    });
    expect(detail.body.data.botConfig).toMatchObject({ ...DEFAULT_VALUES, sessionId: session.sessionId });
    const patched = await call<Envelope<Session>>("PATCH", `/api/sessions/${session.sessionId}/settings`, {
      body: { config: { readReceipts: true } },
      headers: asKey(key),
    });
    expect(patched.body.data.botConfig).toMatchObject(DEFAULT_VALUES);

    // The migration that stores the defaults for such sessions.
    const migration = env.TEST_MIGRATIONS.find(({ name }) => name.includes("bot_config_defaults"));
    for (const query of migration?.queries ?? []) await env.DB.prepare(query).run();
    const got = await call<Envelope<BotConfig>>("GET", `/api/sessions/${session.sessionId}/bot-config`, {
      headers: asKey(key),
    });
    expectCompleteDefaults(got.body.data, session.sessionId);
    expect(got.body.data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
