import type { Context } from "hono";
import type { TranscriptEvent } from "../../../bridge/src/protocol/transcript";
import type { DashboardEnv } from "../ui/env";

/**
 * A run's conversation on the issue page: the transcript events its runner's adapter read from the
 * CLI (GET /heartbeat-runs/{runId}/events), each said plainly; the raw output stays below it.
 */

type StoredEvent = TranscriptEvent & { seq: number };

export async function transcriptOf(c: Context<DashboardEnv>, runId: string): Promise<StoredEvent[]> {
  const read = await c.var.api.read<{ events: StoredEvent[] }>(`/api/heartbeat-runs/${runId}/events`);
  return read.ok ? read.data.events : [];
}

const dollars = (usd: number | null) => (usd === null ? "" : `, $${usd.toFixed(4)}`);

function EventLine({ event }: { event: StoredEvent }) {
  switch (event.type) {
    case "init":
      return (
        <li>
          Session {event.sessionId ?? "(none)"}
          {event.model ? ` with ${event.model}` : ""}
        </li>
      );
    case "assistant":
      return (
        <li>
          <strong>Agent:</strong> {event.text}
        </li>
      );
    case "thinking":
      return <li class="muted">Thinking: {event.text}</li>;
    case "tool_call":
      return (
        <li>
          <strong>Tool call {event.name}:</strong>
          <pre>{event.input}</pre>
        </li>
      );
    case "tool_result":
      return (
        <li>
          <strong>{event.isError ? "Tool error:" : "Tool result:"}</strong>
          <pre>{event.output}</pre>
        </li>
      );
    case "result":
      return (
        <li>
          <strong>{event.ok ? "Finished" : "Failed"}</strong> after {event.turns ?? 0} turns
          {dollars(event.costUsd)}, {event.inputTokens ?? 0} tokens in, {event.outputTokens ?? 0} out
          {event.text ? `: ${event.text}` : ""}
        </li>
      );
    case "error":
      return (
        <li>
          <strong>Error:</strong> {event.message}
        </li>
      );
    case "system":
      return <li class="muted">Runner: {event.message}</li>;
  }
}

export function Transcript({ events }: { events: StoredEvent[] }) {
  if (events.length === 0) return null;
  return (
    <>
      <h4>Conversation</h4>
      <ol class="transcript">
        {events.map((event) => (
          <EventLine event={event} />
        ))}
      </ol>
    </>
  );
}
