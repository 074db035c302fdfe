/**
 * A run's transcript: the conversation an agent CLI had, as structured events the runner's adapter
 * parsed out of the CLI's own output stream (assistant text, tool calls with their inputs, tool
 * results, errors, the CLI's final result). Shared by the runner (which sends them, one `event` frame
 * each) and the edge (which stores them and serves GET /api/heartbeat-runs/:runId/events). The raw
 * output is kept apart, in the run log.
 */
import { z } from "zod";

/** Characters of text one event keeps; longer text is cut and says so (see clip). */
export const EVENT_TEXT_MAX_CHARS = 8 * 1024;

const Text = z.string().max(EVENT_TEXT_MAX_CHARS + 64);
const Id = z.string().max(256);

export const TranscriptEventSchema = z.discriminatedUnion("type", [
  /** The CLI started a session (or resumed one). */
  z.object({
    type: z.literal("init"),
    sessionId: Id.nullable(),
    model: Id.nullable(),
  }),
  z.object({ type: z.literal("assistant"), text: Text }),
  z.object({ type: z.literal("thinking"), text: Text }),
  /** `input` is the tool's input as the model wrote it, as JSON text (cut when long). */
  z.object({ type: z.literal("tool_call"), id: Id, name: Id, input: Text }),
  z.object({ type: z.literal("tool_result"), toolCallId: Id, isError: z.boolean(), output: Text }),
  /** The CLI's own summary of the run. */
  z.object({
    type: z.literal("result"),
    ok: z.boolean(),
    text: Text.nullable(),
    costUsd: z.number().min(0).nullable(),
    inputTokens: z.number().int().min(0).nullable(),
    outputTokens: z.number().int().min(0).nullable(),
    turns: z.number().int().min(0).nullable(),
  }),
  /** Something went wrong: the CLI said so, or its output could not be read. */
  z.object({ type: z.literal("error"), message: Text }),
  /** What the runner itself did about the run (a rejected session started afresh, …). */
  z.object({ type: z.literal("system"), message: Text }),
]);
export type TranscriptEvent = z.infer<typeof TranscriptEventSchema>;
export const TRANSCRIPT_EVENT_TYPES = TranscriptEventSchema.options.map((option) => option.shape.type.value);

/** `text` cut to what an event keeps, saying how much was left out. */
export function clip(text: string, max = EVENT_TEXT_MAX_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length - max} more characters]`;
}
