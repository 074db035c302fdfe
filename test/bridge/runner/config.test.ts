// The runner's configuration: it refuses a token in its environment, and the environment it
// re-executes itself with keeps only what it needs.
import { homedir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cleanEnvironment } from "../../../bridge/src/runner/clean-launch.ts";
import { loadRunnerConfig } from "../../../bridge/src/runner/config.ts";

describe("runner configuration", () => {
  it("reads EDGE_URL, slots and the work directory, with defaults", () => {
    expect(loadRunnerConfig({ EDGE_URL: "https://edge.example.com" })).toEqual({
      edgeUrl: "wss://edge.example.com",
      slots: 2,
      // State under the home directory: not /tmp, where gemini refuses some paths.
      workDir: path.join(homedir(), ".local", "state", "switchboard", "runner"),
      runAs: null,
      tokenFile: undefined,
    });
    expect(
      loadRunnerConfig({ EDGE_URL: "http://x", RUNNER_SLOTS: "5", RUNNER_WORK_DIR: "/w" }),
    ).toMatchObject({
      slots: 5,
      workDir: "/w",
    });
    expect(() => loadRunnerConfig({ EDGE_URL: "http://x", RUNNER_SLOTS: "0" })).toThrow(/invalid runner/);
    expect(() => loadRunnerConfig({})).toThrow(/EDGE_URL is required/);
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
      SWITCHBOARD_RUNNER_CLEAN: "1",
    });
  });
});
