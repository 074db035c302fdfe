// Redaction by value as well as by name: what config reads, the activity log and exports never show.
import { describe, expect, it } from "vitest";
import { isSecretValue, REDACTED, redactSecrets } from "../../../../workers/control/shared";

describe("redaction", () => {
  it("hides values under credential-looking names, OPENAI_KEY included", () => {
    expect(
      redactSecrets({
        env: { OPENAI_KEY: "abc", ANTHROPIC_API_KEY: "x", DB_PASSWORD: "p", GH_TOKEN: "t", MODEL: "claude" },
      }),
    ).toEqual({
      env: {
        OPENAI_KEY: REDACTED,
        ANTHROPIC_API_KEY: REDACTED,
        DB_PASSWORD: REDACTED,
        GH_TOKEN: REDACTED,
        MODEL: "claude",
      },
    });
  });

  it("hides known key formats and random-looking strings whatever the key is called", () => {
    for (const secret of [
      "sk-proj-abcdefghijklmnop1234567890",
      "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
      "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      "xoxb-1234567890-abcdefghij",
      "AKIAIOSFODNN7EXAMPLE",
      "swa_ab12345678901234567890123456789012345678901234",
      "Bearer abcdefghijklmnop",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop",
      "Zx8kQ2pLm9RtV4wY7bN1cF6hJ3sD0gA5",
    ]) {
      expect(isSecretValue(secret), secret).toBe(true);
      expect(redactSecrets({ note: secret }), secret).toEqual({ note: REDACTED });
    }
    for (const harmless of [
      "claude-sonnet-4-5",
      "/srv/app/agent.mjs",
      "550e8400-e29b-41d4-a716-446655440000",
      "Fix the login page before Friday",
      "https://example.com/docs",
      "node",
    ]) {
      expect(isSecretValue(harmless), harmless).toBe(false);
      expect(redactSecrets({ note: harmless })).toEqual({ note: harmless });
    }
  });

  it("keeps a URL but not the password inside it", () => {
    expect(redactSecrets({ url: "postgres://app:hunter2@db.internal:5432/prod" })).toEqual({
      url: `postgres://app:${REDACTED}@db.internal:5432/prod`,
    });
    expect(redactSecrets({ prompt: "Clone https://bot:s3cr3t@git.example.com/repo.git first" })).toEqual({
      prompt: `Clone https://bot:${REDACTED}@git.example.com/repo.git first`,
    });
  });

  it("hides secrets passed as arguments: after a credential flag, in --flag=value, or by shape", () => {
    expect(
      redactSecrets({
        args: [
          "--api-key",
          "plain-looking",
          "--token=abc",
          "--model",
          "gpt-5",
          "sk-proj-abcdefghijklmnop1234567890",
        ],
      }),
    ).toEqual({ args: ["--api-key", REDACTED, `--token=${REDACTED}`, "--model", "gpt-5", REDACTED] });
  });
});
