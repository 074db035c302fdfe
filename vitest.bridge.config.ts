import { defineConfig } from "vitest/config";

/** Unit and integration tests of the Node bridge (bridge/src), run in plain Node. */
export default defineConfig({
  test: {
    environment: "node",
    include: ["test/bridge/**/*.test.ts"],
    passWithNoTests: false,
    // CI runs this suite on two busy cores; waits (test/bridge/support/wait.ts) give up after 20 s,
    // so a test that hangs still fails, with what it was waiting for, before this timeout.
    testTimeout: 30_000,
    expect: { poll: { timeout: 20_000 } },
  },
});
