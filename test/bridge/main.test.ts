/**
 * The real entry point as a child process (`tsx bridge/src/main.ts`, simulator) against the fake edge:
 * it links up, holds a session, and on SIGTERM closes the fleet socket with 1001 and exits 0 promptly.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeEdge, startFakeEdge } from "./support/fake-edge.ts";
import { waitFor } from "./support/wait.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));

let edge: FakeEdge | null = null;
let child: ChildProcess | null = null;
afterEach(async () => {
  // The whole group: tsx runs the bridge as its own child, which a SIGKILL of tsx alone left orphaned.
  if (child?.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, "SIGKILL");
  child = null;
  await edge?.close();
  edge = null;
});

function run(env: Record<string, string>) {
  const output = { stdout: "", stderr: "" };
  const proc = spawn(tsx, ["bridge/src/main.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  proc.stdout?.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  proc.stderr?.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once("exit", (code, signal) => resolve({ code, signal })),
  );
  child = proc;
  return { proc, output, exited };
}

describe("bridge main", () => {
  it("exits 0 promptly on SIGTERM, closing the fleet socket with 1001, and logs JSON without secrets", async () => {
    edge = await startFakeEdge("main-test-token");
    const fake = edge;
    fake.session("m1").auth = {
      creds: { registered: true, me: { id: "491511234567@s.whatsapp.net" } },
      keys: { "pre-key:1": "secret-key-material" },
    };
    const { proc, output, exited } = run({
      EDGE_URL: fake.url,
      BRIDGE_TOKEN: "main-test-token",
      BRIDGE_ID: "child-bridge",
      SIMULATOR: "1",
      // Every line the bridge can write: none of them may carry a secret.
      LOG_LEVEL: "debug",
    });

    await waitFor(
      () => fake.fleet.frames.some((frame) => frame.type === "hello"),
      "hello from the child",
      15_000,
    );
    fake.sendFleet({ type: "assign", session: "m1" });
    await waitFor(
      () => fake.session("m1").stored.some((event) => event.kind === "connected"),
      "session connected",
    );

    const signalled = Date.now();
    proc.kill("SIGTERM");
    const { code, signal } = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(4_000);
    await waitFor(() => fake.fleet.closes.length === 1, "fleet close seen by the edge");
    expect(fake.fleet.closes).toEqual([1001]);
    expect(fake.session("m1").closes).toEqual([1001]);
    // WhatsApp was closed without logout: no logged_out event, creds still stored.
    expect(fake.session("m1").stored.map((event) => event.kind)).toEqual(["connecting", "connected"]);

    const lines = output.stdout.trim().split("\n");
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.map((line) => JSON.parse(line).msg)).toContain("bridge stopped");
    expect(output.stdout).not.toContain("main-test-token");
    expect(output.stdout).not.toContain("secret-key-material");
  }, 30_000);

  it("a session's stray rejection or exception is logged as that session's, and every session stays up", async () => {
    edge = await startFakeEdge("main-test-token");
    const fake = edge;
    const { proc, output } = run({
      EDGE_URL: fake.url,
      BRIDGE_TOKEN: "main-test-token",
      BRIDGE_ID: "child-bridge",
      SIMULATOR: "1",
      // Every line the bridge can write: none of them may carry a secret.
      LOG_LEVEL: "debug",
    });
    await waitFor(() => fake.fleet.frames.some((frame) => frame.type === "hello"), "hello", 15_000);
    for (const [session, number] of [
      ["f1", "491511230001"],
      ["f2", "491511230002"],
    ] as const) {
      fake.session(session).auth = {
        creds: { registered: true, me: { id: `${number}@s.whatsapp.net` } },
        keys: {},
      };
      fake.sendFleet({ type: "assign", session });
    }
    await waitFor(
      () => ["f1", "f2"].every((id) => fake.session(id).stored.some((event) => event.kind === "connected")),
      "both sessions connected",
    );

    // The simulated WhatsApp of f1 fails as a library bug does: nobody is there to catch it.
    expect(await fake.command("f1", "sim", { action: "fault", kind: "rejection" })).toMatchObject({
      ok: true,
    });
    expect(await fake.command("f1", "sim", { action: "fault", kind: "exception" })).toMatchObject({
      ok: true,
    });
    const faults = await waitFor(() => {
      const logged = output.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { msg: string; session?: string | null; error?: string })
        .filter((line) => /^(unhandled rejection|uncaught exception)/.test(line.msg));
      return logged.length === 2 && logged;
    }, "both faults logged");
    expect(faults).toEqual([
      expect.objectContaining({ session: "f1", error: "simulated unhandled rejection" }),
      expect.objectContaining({ session: "f1", error: "simulated uncaught exception" }),
    ]);

    // The process is up and both sessions still answer, over the same links.
    expect(proc.exitCode).toBeNull();
    expect(await fake.command("f2", "sim", { action: "stats" })).toMatchObject({ ok: true });
    expect(await fake.command("f1", "sim", { action: "stats" })).toMatchObject({ ok: true });
    expect(fake.fleet.closes).toEqual([]);
    expect([fake.session("f1").closes, fake.session("f2").closes]).toEqual([[], []]);
    expect(output.stdout).not.toContain("main-test-token");
  }, 30_000);

  it("exits 1 with a clear message when the configuration is invalid", async () => {
    const { output, exited } = run({ EDGE_URL: "http://127.0.0.1:1" });
    expect((await exited).code).toBe(1);
    expect(output.stdout).toContain("BRIDGE_TOKEN is required");
  }, 30_000);
});
