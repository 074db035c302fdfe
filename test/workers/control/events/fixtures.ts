// A company's control-plane events (issue 33): writing them through the API and reading them back as
// a consumer does, page by page or over the stream.
import { expect } from "vitest";
import { Link } from "../../fake-bridge";
import { BASE, call, fetchWorker } from "../../helpers";
import type { SeededCompany } from "../helpers";

export interface CompanyEvent {
  id: string;
  cursor: string;
  event: string;
  companyId: string;
  timestamp: string;
  data: {
    actorType: string;
    actorId: string;
    entityType: string;
    entityId: string;
    details: Record<string, unknown>;
  };
}

interface Page {
  data: { events: CompanyEvent[]; next: string };
}

export function page(company: SeededCompany, headers: Record<string, string>, query: string) {
  return call<Page>("GET", `/api/companies/${company.id}/events?${query}`, { headers });
}

/** Every event after `after`, following `next` `limit` at a time, and the cursor it ended on. */
export async function readAll(
  company: SeededCompany,
  headers: Record<string, string>,
  limit: number,
  after = "0",
): Promise<{ events: CompanyEvent[]; next: string }> {
  const events: CompanyEvent[] = [];
  let cursor = after;
  for (;;) {
    const res = await page(company, headers, `after=${cursor}&limit=${limit}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    events.push(...res.body.data.events);
    if (res.body.data.events.length === 0) {
      expect(res.body.data.next).toBe(cursor);
      return { events, next: cursor };
    }
    cursor = res.body.data.next;
  }
}

/** Creates an issue through the API (an `issue.created` event); answers its id. */
export async function createIssue(
  company: SeededCompany,
  headers: Record<string, string>,
  title: string,
): Promise<string> {
  const res = await call<{ id: string }>("POST", `/api/companies/${company.id}/issues`, {
    headers,
    body: { title },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

export async function comment(issueId: string, headers: Record<string, string>, body: string): Promise<void> {
  const res = await call("POST", `/api/issues/${issueId}/comments`, { headers, body: { body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

export function openStream(company: SeededCompany, headers: Record<string, string>, after: string) {
  return fetchWorker(`${BASE}/api/companies/${company.id}/events/stream?after=${after}`, {
    headers: { Upgrade: "websocket", ...headers },
  });
}

export async function stream(company: SeededCompany, headers: Record<string, string>, after = "0") {
  const res = await openStream(company, headers, after);
  expect(res.status).toBe(101);
  return new Link(res.webSocket as WebSocket);
}

export const framesOf = (link: Link) => link.frames as unknown as CompanyEvent[];
