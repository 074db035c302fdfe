// Redaction by value (issue 25, M-b): a run that prints its company's secrets (current or rotated
// away, whole or split across two output frames, JSON-escaped or base64) or its own run-scoped key
// has none of them stored, served or pushed; output stored before scrubbing existed is served
// scrubbed. Through the real runner link and the real API.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import type { Link } from "../../fake-bridge";
import { call } from "../../helpers";
import { eventually } from "../../patience";
import { type BoardUser, seedAgent, seedCompany, seedIssue } from "../helpers";
import { listen, signedInOwner } from "../live/sockets";
import { claimOne, type RunAssignment, runnerFor } from "../runner-link";

type Json = Record<string, unknown>;

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

async function createSecret(owner: BoardUser, companyId: string, name: string, value: string) {
  const res = await call<{ id: string; key: string }>("POST", `/api/companies/${companyId}/secrets`, {
    headers: owner.headers,
    body: { name, value },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function rotate(owner: BoardUser, secretId: string, value: string) {
  const res = await call("PATCH", `/api/secrets/${secretId}`, { headers: owner.headers, body: { value } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** Which of `values` appear in `text`. */
const leaked = (text: string, values: Record<string, string>) =>
  Object.entries(values)
    .filter(([, value]) => text.includes(value))
    .map(([name]) => name);

async function storedOutput(runId: string) {
  const chunks = await env.DB.prepare(
    "SELECT stream, text FROM heartbeat_run_log_chunks WHERE run_id = ? ORDER BY seq",
  )
    .bind(runId)
    .all<{ stream: string; text: string }>();
  const run = await env.DB.prepare("SELECT log_excerpt, error_reason, usage FROM heartbeat_runs WHERE id = ?")
    .bind(runId)
    .first<Json>();
  const events = await env.DB.prepare("SELECT data FROM heartbeat_run_events WHERE run_id = ?")
    .bind(runId)
    .all<{ data: string }>();
  const stream = (name: string) =>
    chunks.results
      .filter((chunk) => chunk.stream === name)
      .map((chunk) => chunk.text)
      .join("");
  return {
    stdout: stream("stdout"),
    stderr: stream("stderr"),
    rest: JSON.stringify([run, events.results]),
  };
}

async function served(owner: BoardUser, runId: string, companyId: string) {
  const paths = [
    `/api/heartbeat-runs/${runId}`,
    `/api/heartbeat-runs/${runId}/log`,
    `/api/heartbeat-runs/${runId}/events`,
    `/api/companies/${companyId}/heartbeat-runs`,
  ];
  const bodies = [];
  for (const path of paths) {
    const res = await call("GET", path, { headers: owner.headers });
    expect(res.status, path).toBe(200);
    bodies.push(res.body);
  }
  return bodies as [
    Json & { logExcerpt: string },
    { chunks: { stream: string; text: string }[] },
    Json,
    Json,
  ];
}

const runStatus = async (id: string) =>
  (await env.DB.prepare("SELECT status FROM heartbeat_runs WHERE id = ?").bind(id).first<Json>())?.status;

async function companyWithIssue(owner: BoardUser) {
  const company = await seedCompany(owner);
  return { company, issue: await seedIssue(company, { status: "todo" }) };
}

/** What base64 of `value` ends with beyond its whole 3-byte groups (not recognisable on its own). */
const base64Rest = (value: string) =>
  btoa(value).slice(Math.floor(new TextEncoder().encode(value).length / 3) * 4);

describe("secret values in run output", () => {
  it("are scrubbed before output is stored, served or pushed: all versions, split values, the run key", async () => {
    const owner = await signedInOwner();
    const { company, issue } = await companyWithIssue(owner);
    const old = `dep-old-${crypto.randomUUID()}`;
    const current = `dep-new-${crypto.randomUUID()}`;
    const token = await createSecret(owner, company.id, "Deploy Token", old);
    await rotate(owner, token.id, current);
    const pem = `-----BEGIN KEY-----\n${crypto.randomUUID()}\n-----END KEY-----`;
    await createSecret(owner, company.id, "Signing Key", pem);
    await seedAgent(company.id, {
      name: "Leaky",
      adapterConfig: { command: "true", env: { DEPLOY_TOKEN: { type: "secret_ref", secretId: token.id } } },
    });
    const page = await listen(`/api/issues/${issue.id}/events`, owner.cookieHeaders);
    const comment = await call("POST", `/api/issues/${issue.id}/comments`, {
      headers: owner.headers,
      body: { body: "@Leaky deploy" },
    });
    expect(comment.status).toBe(201);
    const runner: Link = await runnerFor({ ...owner, headers: owner.cookieHeaders }, company.id);
    const run: RunAssignment = await claimOne(runner);
    expect(run.env.DEPLOY_TOKEN).toBe(current);
    const runKey = run.env.PLATFORM_API_KEY ?? "";
    expect(runKey).toMatch(/^swa_/);
    const values = {
      current,
      old,
      runKey,
      pem,
      pemEscaped: JSON.stringify(pem).slice(1, -1),
      base64: btoa(current),
    };

    const frames: Array<["stdout" | "stderr", string]> = [
      ["stdout", `token is ${current}\n`],
      // The old value split across two stdout frames, with a stderr frame between them.
      ["stdout", `old ${old.slice(0, 12)}`],
      ["stderr", `curl -H "Authorization: Bearer ${runKey}"\n`],
      ["stdout", `${old.slice(12)} done\n`],
      ["stdout", `{"type":"assistant","text":"${values.pemEscaped}"}\n`],
      ["stdout", `encoded ${btoa(current)}\n`],
      // The current value split mid-frame twice over three frames.
      ["stdout", `again ${current.slice(0, 5)}`],
      ["stdout", current.slice(5, 20)],
      ["stdout", `${current.slice(20)}!\n`],
    ];
    for (const [seq, [stream, text]] of frames.entries())
      runner.send({ type: "log", runId: run.runId, seq, stream, text });
    runner.send({
      type: "event",
      runId: run.runId,
      seq: 0,
      event: { type: "assistant", text: `The token is ${current} and the key ${runKey}` },
    });
    runner.send({
      type: "finish",
      runId: run.runId,
      exitCode: 1,
      timedOut: false,
      logFrames: frames.length,
      eventFrames: 1,
      error: `deploy failed with ${old}`,
    });
    await eventually(async () => (await runStatus(run.runId)) === "failed");
    await page.next((f) => f.kind === "run.ended");

    const stored = await storedOutput(run.runId);
    for (const text of Object.values(stored)) expect(leaked(text, values)).toEqual([]);
    // The output around the values is kept, each value replaced by its secret's key.
    expect(stored.stdout).toBe(
      "token is [redacted:deploy_token]\n" +
        "old [redacted:deploy_token] done\n" +
        '{"type":"assistant","text":"[redacted:signing_key]"}\n' +
        `encoded [redacted:deploy_token]${base64Rest(current)}\n` +
        "again [redacted:deploy_token]!\n",
    );
    expect(stored.stderr).toBe('curl -H "Authorization: Bearer [redacted:platform_key]"\n');

    const [detail, log, events, list] = await served(owner, run.runId, company.id);
    for (const body of [detail, log, events, list]) expect(leaked(JSON.stringify(body), values)).toEqual([]);
    expect(detail.errorReason).toBe("deploy failed with [redacted:deploy_token]");
    expect(detail.logExcerpt).toContain("again [redacted:deploy_token]!");
    expect(JSON.stringify(events)).toContain("The token is [redacted:deploy_token]");
    expect(leaked(JSON.stringify(page.frames), values)).toEqual([]);
    page.socket.close(1000, "done");
    runner.socket.close(1000, "done");
  });

  it("puts frames back in order before scrubbing: a value split across frames that arrive last-first is caught", async () => {
    // workerd hands a burst of socket messages to the object out of order (CI saw a split value
    // stored in pieces): here the runner itself sends them backwards, and one never arrives.
    const owner = await signedInOwner();
    const { company, issue } = await companyWithIssue(owner);
    const value = `dep-${crypto.randomUUID()}`;
    await createSecret(owner, company.id, "Deploy Token", value);
    await seedAgent(company.id, { name: "Backwards", adapterConfig: { command: "true" } });
    await call("POST", `/api/issues/${issue.id}/comments`, {
      headers: owner.headers,
      body: { body: "@Backwards go" },
    });
    const runner = await runnerFor({ ...owner, headers: owner.cookieHeaders }, company.id);
    const run = await claimOne(runner);
    const frames = [`a ${value.slice(0, 7)}`, value.slice(7, 20), `${value.slice(20)} b\n`];
    for (const seq of [2, 1, 0])
      runner.send({ type: "log", runId: run.runId, seq, stream: "stdout", text: frames[seq] });
    // Frame 4 comes, frame 3 never does: the finish's grace gives up on it and keeps frame 4.
    runner.send({
      type: "log",
      runId: run.runId,
      seq: 4,
      stream: "stdout",
      text: `then ${value.slice(0, 9)}`,
    });
    runner.send({ type: "finish", runId: run.runId, exitCode: 0, timedOut: false, logFrames: 5 });
    await eventually(async () => (await runStatus(run.runId)) === "succeeded");
    const stored = await storedOutput(run.runId);
    expect(stored.stdout).toBe(`a [redacted:deploy_token] b\nthen ${value.slice(0, 9)}`);
    runner.socket.close(1000, "done");
  });

  it("serves output stored before scrubbing (or before the secret existed) scrubbed", async () => {
    const owner = await signedInOwner();
    const { company, issue } = await companyWithIssue(owner);
    await seedAgent(company.id, { name: "Quiet", adapterConfig: { command: "true" } });
    await call("POST", `/api/issues/${issue.id}/comments`, {
      headers: owner.headers,
      body: { body: "@Quiet go" },
    });
    const runner = await runnerFor({ ...owner, headers: owner.cookieHeaders }, company.id);
    const run = await claimOne(runner);
    runner.send({ type: "finish", runId: run.runId, exitCode: 0, timedOut: false, logFrames: 0 });
    await eventually(async () => (await runStatus(run.runId)) === "succeeded");
    runner.socket.close(1000, "done");

    // Raw output as an older version stored it, with a value that only later became a secret.
    const value = `legacy-${crypto.randomUUID()}`;
    const now = Date.now();
    const excerpt = `${value.slice(9)}${"x".repeat(16 * 1024)}`;
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO heartbeat_run_log_chunks (run_id, seq, stream, text, created_at) VALUES (?, 0, 'stdout', ?, ?), (?, 1, 'stdout', ?, ?)",
      ).bind(run.runId, `key=${value.slice(0, 9)}`, now, run.runId, `${value.slice(9)}\nbye\n`, now),
      env.DB.prepare("UPDATE heartbeat_runs SET log_excerpt = ?, error_reason = ? WHERE id = ?").bind(
        excerpt,
        `printed ${value}`,
        run.runId,
      ),
      env.DB.prepare(
        "INSERT INTO heartbeat_run_events (run_id, seq, type, data, created_at) VALUES (?, 0, 'assistant', ?, ?)",
      ).bind(run.runId, JSON.stringify({ text: `it is ${value}` }), now),
    ]);
    await createSecret(owner, company.id, "Legacy", value);

    const [detail, log, events, list] = await served(owner, run.runId, company.id);
    for (const body of [detail, log, events, list])
      expect(leaked(JSON.stringify(body), { value, tail: value.slice(9) })).toEqual([]);
    expect(log.chunks.map((chunk) => chunk.text).join("")).toBe("key=[redacted:legacy]\nbye\n");
    // The excerpt is a cut tail: the end of the value at its start is redacted too.
    expect(detail.logExcerpt.startsWith("[redacted:legacy]x")).toBe(true);
    expect(detail.errorReason).toBe("printed [redacted:legacy]");
    expect(JSON.stringify(events)).toContain("it is [redacted:legacy]");
  });
});
