import { describe, expect, it } from "vitest";
import committed from "../../../docs/openapi.json";
import { call } from "../helpers";

describe("docs/openapi.json", () => {
  it("matches the document the app serves (run `npm run docs:openapi` after changing a route)", async () => {
    const served = await call("GET", "/api/openapi.json");
    expect(served.body).toEqual(committed);
  });
});
