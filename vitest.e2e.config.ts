import { defineConfig } from "vitest/config";

/** End-to-end tests against the real local stack (`node scripts/start.mjs`), one file at a time. */
export default defineConfig({
  test: {
    environment: "node",
    include: ["test/e2e/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    // expect.poll gives up after 1 s by default; a real stack on two busy cores needs longer.
    expect: { poll: { timeout: 20_000 } },
  },
});
