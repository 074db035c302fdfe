// The runner's configuration: it refuses a token in its environment, and the environment it
// re-executes itself with keeps only what it needs.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cleanEnvironment } from "../../../bridge/src/runner/clean-launch.ts";
import { loadRunnerConfig } from "../../../bridge/src/runner/config.ts";

const CHECKOUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

describe("runner configuration", () => {
  it("reads EDGE_URL, slots and the work directory, with defaults", () => {
    expect(loadRunnerConfig({ EDGE_URL: "https://edge.example.com" })).toEqual({
      edgeUrl: "wss://edge.example.com",
      slots: 2,
      // This checkout's state dir (wrangler's default, where the local D1 lives): deleting it cleans
      // the runner too, and another clone of the same user has its own.
      workDir: path.join(CHECKOUT, ".wrangler", "state", "runner"),
      runAs: null,
      tokenFile: undefined,
      logLevel: "warn",
    });
    // STATE_DIR moves the stack's state, the runner's with it; RUNNER_WORK_DIR names it outright.
    expect(loadRunnerConfig({ EDGE_URL: "http://x", STATE_DIR: "/srv/state" }).workDir).toBe(
      "/srv/state/runner",
    );
    expect(
      loadRunnerConfig({ EDGE_URL: "http://x", STATE_DIR: "/srv/state", RUNNER_WORK_DIR: "/w" }).workDir,
    ).toBe("/w");
    expect(
      loadRunnerConfig({ EDGE_URL: "http://x", RUNNER_SLOTS: "5", RUNNER_WORK_DIR: "/w" }),
    ).toMatchObject({
      slots: 5,
      workDir: "/w",
    });
    expect(() => loadRunnerConfig({ EDGE_URL: "http://x", RUNNER_SLOTS: "0" })).toThrow(/invalid runner/);
    expect(() => loadRunnerConfig({})).toThrow(/EDGE_URL is required/);
  });

  it("takes LOG_LEVEL as the rest of the stack does, and refuses an unknown one", () => {
    expect(loadRunnerConfig({ EDGE_URL: "http://x", LOG_LEVEL: "info" }).logLevel).toBe("info");
    expect(() => loadRunnerConfig({ EDGE_URL: "http://x", LOG_LEVEL: "verbose" })).toThrow(
      /LOG_LEVEL must be one of debug, info, log, warn, error, none/,
    );
  });

  it("refuses RUNNER_TOKEN without echoing it: agents could read it from /proc/<runner>/environ", () => {
    const attempt = () => loadRunnerConfig({ EDGE_URL: "http://x", RUNNER_TOKEN: "swr_leaky" });
    expect(attempt).toThrow(/RUNNER_TOKEN is refused/);
    expect(attempt).not.toThrow(/swr_leaky/);
  });

  it("re-executes with only its own settings and the allowlisted variables", () => {
    const clean = cleanEnvironment({
      PATH: "/usr/bin",
      HOME: "/home/me",
      EDGE_URL: "http://edge",
      RUNNER_SLOTS: "3",
      STATE_DIR: "/srv/state",
      LOG_LEVEL: "info",
      RUNNER_TOKEN_FILE: "/secret/token",
      BRIDGE_TOKEN: "bridge-secret",
      ADMIN_PASSWORD: "admin-secret",
      AWS_SECRET_ACCESS_KEY: "aws-secret",
      npm_config_user_agent: "npm",
    });
    expect(clean).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/me",
      EDGE_URL: "http://edge",
      RUNNER_SLOTS: "3",
      STATE_DIR: "/srv/state",
      LOG_LEVEL: "info",
      SWITCHBOARD_RUNNER_CLEAN: "1",
    });
  });
});
