// A session held by a fake bridge and connected, as the messaging suites need one: an OWNER with a key
// creates it, starts it, the fake bridge takes the lease and reports WhatsApp connected.
import { afterEach, expect } from "vitest";
import { emit, FakeBridge, type Link } from "./fake-bridge";
import { asKey, call, createUser, generateKey } from "./helpers";

export interface OwnedSession {
  key: string;
  userId: string;
  id: string;
  slug: string;
}

export interface ConnectedSession extends OwnedSession {
  bridge: FakeBridge;
  link: Link;
}

const bridges: FakeBridge[] = [];
afterEach(() => {
  for (const bridge of bridges.splice(0)) bridge.fleet.socket.close(1001, "test done");
});

/** A new OWNER's stopped session. */
export async function ownedSession(name: string): Promise<OwnedSession> {
  const user = await createUser("OWNER");
  const key = await generateKey(user);
  const created = await call<{ data: { id: string; sessionId: string } }>("POST", "/api/sessions", {
    body: { name },
    headers: asKey(key),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const { id, sessionId: slug } = created.body.data;
  return { key, userId: user.userId, id, slug };
}

/** Starts `session`, lets a fresh fake bridge hold it, and reports WhatsApp connected as `me` (event seq 1). */
export async function connect(session: OwnedSession, me: string): Promise<ConnectedSession> {
  const bridge = await new FakeBridge().connect();
  bridges.push(bridge);
  expect(
    (await call("POST", `/api/sessions/${session.slug}/start`, { headers: asKey(session.key) })).status,
  ).toBe(200);
  await bridge.waitForAssign(session.id);
  const held = await bridge.hold(session.id);
  if (!("link" in held)) throw new Error(`hold failed: ${held.status}`);
  await emit(held.link, 1, 1, { kind: "connected", me: { id: me } });
  return { ...session, bridge, link: held.link };
}

export async function connectedSession(name: string, me: string): Promise<ConnectedSession> {
  return connect(await ownedSession(name), me);
}

type SendFrame = Record<string, unknown> & { id?: unknown; args?: unknown };

/**
 * Answers a session's `wa send` command as the bridge does: the message as WhatsApp accepted it (sent
 * by `sender`, to the frame's chat, with the frame's content), or the given failure.
 */
export function answerSend(
  link: Link,
  frame: SendFrame,
  sender: string,
  failure?: { status: number; error: string },
): void {
  if (failure) {
    link.send({ type: "result", epoch: 1, id: frame.id, ok: false, ...failure });
    return;
  }
  const args = frame.args as { to: string; messageId: string; content: Record<string, unknown> };
  link.send({
    type: "result",
    epoch: 1,
    id: frame.id,
    ok: true,
    data: {
      id: args.messageId,
      chat: args.to,
      sender,
      fromMe: true,
      timestamp: Date.now(),
      content: args.content,
      status: "SENT",
    },
  });
}
