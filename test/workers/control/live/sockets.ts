// Listening to the dashboard's live sockets in workerd suites, as the dashboard's script does.
import { expect } from "vitest";
import { Link } from "../../fake-bridge";
import { asSession, BASE, createUser, fetchWorker } from "../../helpers";
import type { BoardUser } from "../helpers";

export type Frame = Record<string, unknown> & { type: string };

/** A board owner signed in with a cookie, as the dashboard is. */
export async function signedInOwner(): Promise<BoardUser & { cookieHeaders: Record<string, string> }> {
  const session = await createUser("OWNER");
  const headers = asSession(session);
  return { userId: session.userId, key: "", headers, cookieHeaders: headers };
}

export function open(path: string, headers: Record<string, string>): Promise<Response> {
  return fetchWorker(`${BASE}${path}`, { headers: { Upgrade: "websocket", ...headers } });
}

export async function listen(path: string, headers: Record<string, string>): Promise<Link> {
  const res = await open(path, { Origin: BASE, ...headers });
  expect(res.status).toBe(101);
  const link = new Link(res.webSocket as WebSocket);
  await link.next((f) => f.type === "hello");
  return link;
}

export const events = (link: Link): Frame[] => link.frames.filter((f) => f.type === "event");
