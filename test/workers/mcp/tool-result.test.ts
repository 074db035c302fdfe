// What a tool answers for each kind of REST body: always a JSON object, because Gemini CLI turns the
// first text into structuredContent and refuses anything but an object (docs/mcp.md).
import { describe, expect, it } from "vitest";
import { toolResultOf } from "../../../workers/mcp/tools";

const textOf = (body: unknown) => {
  const [part] = toolResultOf({ status: 200, body }).content;
  return part?.type === "text" ? JSON.parse(part.text) : undefined;
};

describe("toolResultOf", () => {
  it("answers an object as it is, a list as {items}, a scalar or an empty body as {value}", () => {
    expect(textOf({ id: "i1" })).toEqual({ id: "i1" });
    expect(textOf([{ id: "a" }])).toEqual({ items: [{ id: "a" }] });
    expect(textOf(5)).toEqual({ value: 5 });
    expect(textOf(null)).toEqual({ value: null });
  });

  it("answers a refusal as an error naming the status and the API's error", () => {
    const result = toolResultOf({ status: 404, body: { error: "Issue not found" } });
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "HTTP 404: Issue not found" }],
    });
  });
});
