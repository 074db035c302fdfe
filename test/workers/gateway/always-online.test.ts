// `alwaysOnline`: the session asks its bridge to show the account online (`availability`) when the
// setting is turned on, again every time the account connects, and offline when it is turned off.
import { describe, expect, it } from "vitest";
import { type ConnectedSession, connectedSession } from "../connected-session";
import { emit } from "../fake-bridge";
import { asKey, call } from "../helpers";

type Frame = Record<string, unknown> & { type: string };

const ME = "628111000444@s.whatsapp.net";

const isAvailability = (f: Frame) =>
  f.type === "command" && f.name === "wa" && (f.args as { op?: string }).op === "availability";

const answered = new Set<unknown>();

/** The `availability` commands the bridge was sent so far (each answered once), as `online` values. */
function availability(s: ConnectedSession): boolean[] {
  const frames = s.link.frames.filter(isAvailability);
  for (const frame of frames) {
    if (answered.has(frame.id)) continue;
    answered.add(frame.id);
    s.link.send({ type: "result", epoch: 1, id: frame.id, ok: true });
  }
  return frames.map((frame) => (frame.args as { online: boolean }).online);
}

async function availabilityCount(s: ConnectedSession, n: number): Promise<boolean[]> {
  await s.link.next(() => s.link.frames.filter(isAvailability).length >= n);
  return availability(s);
}

async function setAlwaysOnline(s: ConnectedSession, alwaysOnline: boolean): Promise<void> {
  const res = await call("PATCH", `/api/sessions/${s.slug}/settings`, {
    body: { config: { alwaysOnline } },
    headers: asKey(s.key),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

describe("alwaysOnline", () => {
  it("shows the account online when turned on and on every connect; offline when turned off", async () => {
    const s = await connectedSession("Always online", ME);
    // Another setting changes nothing about availability; the first command follows alwaysOnline.
    const other = await call("PATCH", `/api/sessions/${s.slug}/settings`, {
      body: { config: { readReceipts: true } },
      headers: asKey(s.key),
    });
    expect(other.status).toBe(200);
    await setAlwaysOnline(s, true);
    expect(await availabilityCount(s, 1)).toEqual([true]);

    // WhatsApp drops the line and the bridge reconnects: online again.
    await emit(s.link, 1, 2, {
      kind: "disconnected",
      code: 428,
      reason: "connection closed",
      next: "reconnecting",
    });
    await emit(s.link, 1, 3, { kind: "connected", me: { id: ME } });
    expect(await availabilityCount(s, 2)).toEqual([true, true]);

    await setAlwaysOnline(s, false);
    expect(await availabilityCount(s, 3)).toEqual([true, true, false]);

    // Off: a reconnect shows nothing, and setting it off again sends nothing more; turning it on is
    // the next command.
    await emit(s.link, 1, 4, {
      kind: "disconnected",
      code: 428,
      reason: "connection closed",
      next: "reconnecting",
    });
    await emit(s.link, 1, 5, { kind: "connected", me: { id: ME } });
    await setAlwaysOnline(s, false);
    await setAlwaysOnline(s, true);
    expect(await availabilityCount(s, 4)).toEqual([true, true, false, true]);
  });

  it("with alwaysOnline on, the account is shown online again after every reconnect", async () => {
    const s = await connectedSession("Online from the start", ME);
    await setAlwaysOnline(s, true);
    expect(await availabilityCount(s, 1)).toEqual([true]);
    await emit(s.link, 1, 2, {
      kind: "disconnected",
      code: 515,
      reason: "restart required",
      next: "reconnecting",
    });
    await emit(s.link, 1, 3, { kind: "connected", me: { id: ME } });
    expect(await availabilityCount(s, 2)).toEqual([true, true]);
  });
});
