import { availableParallelism } from "node:os";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

/** Tests that run inside workerd with real D1 and Durable Objects (storage isolated per test file). */
export default defineConfig({
  plugins: [
    cloudflareTest(async () => ({
      main: "./workers/index.ts",
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations(path.join(import.meta.dirname, "migrations")),
          ENVIRONMENT: "test",
          ADMIN_EMAIL: "root@example.test",
          ADMIN_PASSWORD: "root-password-for-tests",
          BRIDGE_TOKEN: "test-bridge-token",
          SECRETS_MASTER_KEY: "dGVzdC1vbmx5LW1hc3Rlci1rZXktMzItYnl0ZXMhISE=",
          SIMULATOR: "1",
          FLEET_GRACE_MS: "300",
          QR_WAIT_MS: "5000",
          WEBHOOK_ALLOWED_HOSTS: "127.0.0.1,localhost",
        },
      },
    })),
  ],
  test: {
    include: ["test/workers/**/*.test.ts"],
    // Vitest's default (one worker per core, less one) is a single worker on a 2-core machine; the
    // tests' work happens in workerd, so two workers keep both cores busy (~8 → ~6 minutes here).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    setupFiles: ["./test/workers/apply-migrations.ts", "./test/workers/contract-setup.ts"],
    // Vitest's 5 s default is too tight for the tests that drive D1 and Durable Objects hard (the
    // checkout races) when the machine is busy; a hang still fails, just later.
    testTimeout: 30_000,
    // expect.poll gives up after 1 s by default; waits share test/workers/patience.ts's bound instead.
    expect: { poll: { timeout: 20_000 } },
  },
});
