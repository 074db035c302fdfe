import { afterEach, beforeEach, expect } from "vitest";
import { recordedViolations } from "./contract";

// dispatch throws on a response the OpenAPI document does not describe; a test that catches that
// error (a helper that retries, a Promise.allSettled) still fails here.
let seen = 0;
beforeEach(() => {
  seen = recordedViolations.length;
});
afterEach((context) => {
  const fresh = recordedViolations.slice(seen);
  // A test the thrown violation already failed needs no second report of it.
  if (context.task.result?.state === "fail") return;
  expect(fresh, fresh.join("\n\n")).toEqual([]);
});
