import { defineConfig } from "vitest/config";

/** End-to-end tests against the real local stack (`node scripts/start.mjs`), one file at a time. */
export default defineConfig({
  test: {
    environment: "node",
    include: ["test/e2e/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
