// Shared by the webhook API suites: users with keys, sessions, and webhooks created through the API.
import { expect } from "vitest";
import { asKey, call, createUser, generateKey } from "../../helpers";

export type Envelope<T> = { status: boolean; message: string; data: T; error?: string };
/** The fields the tests read; the rest are compared with toMatchObject. */
export type Webhook = { id: string; sessionId: string | null; events: string[]; secret?: string };
export type SessionRef = { id: string; sessionId: string };
export type Owner = Awaited<ReturnType<typeof createUser>> & { key: string };

export const URL_OK = "https://hooks.example.com/switchboard";

export async function owner(role: "OWNER" | "STAFF" = "OWNER"): Promise<Owner> {
  const user = await createUser(role);
  return { ...user, key: await generateKey(user) };
}

export async function newSession(key: string): Promise<SessionRef> {
  const res = await call<Envelope<SessionRef>>("POST", "/api/sessions", {
    body: { name: "Webhooks" },
    headers: asKey(key),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

export async function createWebhook(key: string, session: SessionRef, body: Record<string, unknown> = {}) {
  const res = await call<Envelope<Webhook>>("POST", `/api/webhooks/${session.sessionId}`, {
    body: { name: "CRM", url: URL_OK, events: ["message.received"], ...body },
    headers: asKey(key),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

export async function ownerWithSession(): Promise<{ alice: Owner; session: SessionRef }> {
  const alice = await owner();
  return { alice, session: await newSession(alice.key) };
}
