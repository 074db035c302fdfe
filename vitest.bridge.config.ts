import { defineConfig } from "vitest/config";

/** Unit and integration tests of the Node bridge (bridge/src), run in plain Node. */
export default defineConfig({
  test: {
    environment: "node",
    include: ["test/bridge/**/*.test.ts"],
    passWithNoTests: false,
  },
});
