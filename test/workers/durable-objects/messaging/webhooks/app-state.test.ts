// WhatsApp's app state in the SessionDO: the bridge's `chat.update`, `message.starred`, `label.edit` and
// `label.association` events are stored (chat list, message, labels API) and delivered as `chat.update`,
// `message.starred`, `label.update` and `label.association` webhooks; a star on a message the session
// never stored, or the deletion of a label it never knew, changes and announces nothing.
import { describe, expect, it } from "vitest";
import { emit } from "../../../fake-bridge";
import { asKey, call } from "../../../helpers";
import {
  answers,
  bodyOf,
  type Connected,
  connected,
  endpoint,
  incoming,
  ok,
  PEER,
  to,
  until,
} from "./fake-receivers";

const EVENTS = ["chat.update", "message.starred", "label.update", "label.association"];

const network = (s: Connected, event: Record<string, unknown>) => emit(s.link, 1, s.seq++, event);

async function get<T>(s: Connected, path: string): Promise<T> {
  const res = await call<{ data: T }>("GET", path, { headers: asKey(s.key) });
  expect(res.status, path).toBe(200);
  return res.body.data;
}

type Chat = { jid: string; archived: boolean; pinned: boolean; mutedUntil: string | null };
type Label = { id: string; name: string; color: number; chatCount: number };

describe("app state in the SessionDO", () => {
  it("stores archive, pin, mute and stars from the network and says so in webhooks", async () => {
    const hook = endpoint("state", EVENTS);
    answers.set(hook.url, ok);
    const s = await connected([hook]);
    await incoming(s, "IN-STAR-1");

    await network(s, { kind: "chat.update", jid: PEER, archived: true });
    await network(s, { kind: "chat.update", jid: PEER, pinned: true, mutedUntil: -1 });
    await network(s, { kind: "message.starred", id: "IN-STAR-1", chat: PEER, fromMe: false, starred: true });
    await network(s, { kind: "message.starred", id: "NEVER-SEEN", chat: PEER, fromMe: false, starred: true });

    const chats = await get<Chat[]>(s, `/api/chat/${s.slug}`);
    expect(chats.find((chat) => chat.jid === PEER)).toMatchObject({
      archived: true,
      pinned: true,
      mutedUntil: "9999-12-31T00:00:00.000Z",
    });
    const message = await get<{ starred: boolean }>(s, `/api/messages/${s.slug}/${PEER}/IN-STAR-1`);
    expect(message.starred).toBe(true);

    await until(s, () => to("state").length === 3);
    const events = to("state")
      .map(bodyOf)
      .map(({ event, data }) => ({ event, data }));
    expect(events).toEqual(
      expect.arrayContaining([
        { event: "chat.update", data: { jid: PEER, archived: true, pinned: false, mutedUntil: null } },
        {
          event: "chat.update",
          data: { jid: PEER, archived: true, pinned: true, mutedUntil: "9999-12-31T00:00:00.000Z" },
        },
        {
          event: "message.starred",
          data: { keyId: "IN-STAR-1", remoteJid: PEER, fromMe: false, starred: true },
        },
      ]),
    );
  });

  it("keeps the phone's labels under WhatsApp's ids, on chats, renamed on a name clash, and deleted", async () => {
    const hook = endpoint("labels", EVENTS);
    answers.set(hook.url, ok);
    const s = await connected([hook]);

    await network(s, { kind: "label.edit", label: { id: "1", name: "VIP", color: 3, deleted: false } });
    await network(s, { kind: "label.edit", label: { id: "2", name: "vip", color: 5, deleted: false } });
    await network(s, { kind: "label.association", labelId: "1", chat: PEER, labeled: true });
    const chatLabels = `/api/labels/${s.slug}/chat/${PEER}/labels`;
    expect((await get<{ labels: Label[] }>(s, chatLabels)).labels).toMatchObject([{ id: "1", name: "VIP" }]);
    expect((await get<{ labels: Label[] }>(s, `/api/labels/${s.slug}`)).labels).toMatchObject([
      { id: "1", name: "VIP", color: 3, chatCount: 1 },
      { id: "2", name: "vip (2)", color: 5, chatCount: 0 },
    ]);

    await network(s, { kind: "label.edit", label: { id: "1", name: "VIP", color: 3, deleted: true } });
    await network(s, { kind: "label.edit", label: { id: "9", name: "Gone", color: 0, deleted: true } });
    expect((await get<{ labels: Label[] }>(s, chatLabels)).labels).toEqual([]);
    expect((await get<{ labels: Label[] }>(s, `/api/labels/${s.slug}`)).labels.map(({ id }) => id)).toEqual([
      "2",
    ]);

    await until(s, () => to("labels").length === 4);
    const events = to("labels").map(bodyOf);
    expect(events.map(({ event, data }) => ({ event, data }))).toEqual(
      expect.arrayContaining([
        {
          event: "label.update",
          data: { id: "1", name: "VIP", color: 3, colorHex: "#00FF00", deleted: false },
        },
        { event: "label.update", data: expect.objectContaining({ id: "2", name: "vip (2)" }) },
        { event: "label.association", data: { labelId: "1", jid: PEER, action: "add" } },
        { event: "label.update", data: expect.objectContaining({ id: "1", deleted: true }) },
      ]),
    );
  });
});
