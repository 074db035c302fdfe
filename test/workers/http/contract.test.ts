import { describe, expect, it } from "vitest";
import {
  assertMatchesContract,
  ContractViolation,
  contractViolations,
  recordedViolations,
} from "../contract";
import { asKey, BASE, call, createUser, generateKey } from "../helpers";

const health = (status: number, body: unknown) => ({
  method: "GET",
  path: "/api/health",
  status,
  contentType: "application/json; charset=UTF-8",
  text: JSON.stringify(body),
});

const HEALTHY = { status: true, message: "OK", data: { service: "switchboard" } };

describe("the OpenAPI contract check every workers-suite response goes through", () => {
  it("passes a response that matches its documented schema", () => {
    expect(contractViolations(health(200, HEALTHY))).toEqual([]);
  });

  it("names the field and the schema path when a body drifts from its schema", () => {
    const violations = contractViolations(health(200, { ...HEALTHY, data: { service: 7 } }));
    expect(violations).toHaveLength(1);
    expect(violations[0]).toContain("at /data/service: expected string, got number");
    expect(violations[0]).toContain(
      "#/paths/~1api~1health/get/responses/200/content/application~1json/schema",
    );
    expect(contractViolations(health(200, { status: true, message: "OK" }))[0]).toContain(
      'missing required property "data"',
    );
  });

  it("fails a status the route does not document, a 500 included", () => {
    expect(contractViolations(health(500, { status: false, message: "x", error: "y" }))).toEqual([
      "GET /api/health answered 500, which it does not document (documents 200)",
    ]);
  });

  it("fails a content type the route does not document", () => {
    const html = { ...health(200, HEALTHY), contentType: "text/html; charset=UTF-8", text: "<p>up</p>" };
    expect(contractViolations(html)[0]).toContain("answered text/html");
  });

  it("fails a route the document leaves out unless the allow-list names it", () => {
    expect(contractViolations({ ...health(200, HEALTHY), path: "/api/healthz" })[0]).toContain(
      "GET /api/healthz is not in the OpenAPI document",
    );
    expect(contractViolations({ ...health(200, HEALTHY), method: "DELETE" })[0]).toContain(
      "DELETE /api/health is not in the OpenAPI document",
    );
    // Dashboard pages are on the allow-list.
    expect(
      contractViolations({ ...health(200, HEALTHY), path: "/companies", contentType: "text/html" }),
    ).toEqual([]);
  });

  it("throws from the request path with method, path, status and a body excerpt, and records it", async () => {
    const before = recordedViolations.length;
    const drifted = Response.json({ status: true, message: "OK", data: {} });
    const failure = await assertMatchesContract(
      { method: "GET", url: `${BASE}/api/health?x=1` },
      drifted,
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ContractViolation);
    const message = (failure as Error).message;
    expect(message).toContain("GET /api/health?x=1 → 200");
    expect(message).toContain('missing required property "service"');
    expect(message).toContain('body: {"status":true,"message":"OK","data":{}}');
    // The caller can still read what it received.
    expect(await drifted.json()).toEqual({ status: true, message: "OK", data: {} });
    // Recorded: the suite's afterEach would fail this test too; take it back, the failure was wanted.
    expect(recordedViolations.splice(before)).toHaveLength(1);
  });

  it("a new session's botConfig is the published BotConfig, not null (issue 26)", async () => {
    const owner = await createUser("OWNER");
    const key = await generateKey(owner);
    const created = await call<{ data: { sessionId: string; botConfig: unknown } }>("POST", "/api/sessions", {
      body: { name: "Contract" },
      headers: asKey(key),
    });
    expect(created.status).toBe(200);
    // The document once said non-null while sessions answered null; now both say an object.
    expect(created.body.data.botConfig).toMatchObject({ sessionId: created.body.data.sessionId });
    const detail = await call("GET", `/api/sessions/${created.body.data.sessionId}`, { headers: asKey(key) });
    expect(detail.status).toBe(200);
  });
});
