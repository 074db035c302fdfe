// Helpers for messaging end-to-end suites: a connected session on the simulator, the simulated world,
// and raw requests (multipart, bodies that are not JSON).
import { expect } from "vitest";
import { type ApiClient, eventually } from "./api.ts";

export type Envelope<T> = { status: boolean; message: string; data: T };

/** Creates `id`, starts it, scans the QR in the simulator and waits for Connected; returns `me.id`. */
export async function connectedSession(api: ApiClient, id: string): Promise<string> {
  expect((await api.call("POST", "/api/sessions", { name: id, sessionId: id })).status).toBe(200);
  expect((await api.call("POST", `/api/sessions/${id}/start`)).status).toBe(200);
  await eventually(
    async () => ((await api.call("GET", `/api/sessions/${id}/qr`)).status === 200 ? true : undefined),
    20_000,
    `a QR for ${id}`,
  );
  expect((await api.call("POST", `/api/sessions/${id}/simulate/scan`)).status).toBe(200);
  return eventually(
    async () => {
      const detail = await api.call<Envelope<{ state: string; me: { id: string } | null }>>(
        "GET",
        `/api/sessions/${id}`,
      );
      return detail.body.data.state === "connected" ? (detail.body.data.me?.id ?? "") : undefined;
    },
    20_000,
    `${id} to connect`,
  );
}

/** One action in the simulated WhatsApp world (bridge/src/simulator/simulator.ts lists them). */
export async function world<T = unknown>(
  api: ApiClient,
  sessionId: string,
  action: string,
  args: Record<string, unknown> = {},
): Promise<T> {
  const response = await api.call<Envelope<T>>("POST", `/api/sessions/${sessionId}/simulate/world`, {
    action,
    ...args,
  });
  if (response.status !== 200)
    throw new Error(`world ${action}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/** What the simulated peers received from this session, optionally for one chat. */
export function inbox<T = Record<string, unknown>>(
  api: ApiClient,
  sessionId: string,
  peer?: string,
): Promise<T[]> {
  return world<T[]>(api, sessionId, "inbox", peer ? { peer } : {});
}

export const jidPath = (jid: string) => encodeURIComponent(jid);

/** A fresh person JID (12 digits, never starting with 999, which the simulator treats as unregistered). */
export function personJid(): string {
  let digits = String(1 + Math.floor(Math.random() * 8));
  while (digits.length < 12) digits += String(Math.floor(Math.random() * 10));
  return `${digits}@s.whatsapp.net`;
}

/** A raw request with the client's key: multipart forms, non-JSON bodies, custom headers. */
export async function rawCall(
  baseUrl: string,
  api: ApiClient,
  method: string,
  path: string,
  init: { body?: RequestInit["body"]; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { "X-API-Key": api.key, ...init.headers },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, headers: response.headers };
}
