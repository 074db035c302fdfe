import type { LineOverview } from "../../control/line";
import { DataTable, EmptyState, Time } from "../ui/components";

const KIND_LABELS: Record<string, string> = {
  approvals: "Approval",
  questions: "Question",
  budget: "Budget",
  failed_runs: "Failed run",
  digest: "Digest",
  mentions: "Mention",
};

/** The company's WhatsApp line on its settings page: the session, members' numbers, the last notices. */
export function LinePanel({ overview }: { overview: LineOverview }) {
  const { line, members, notices } = overview;
  return (
    <section class="panel" aria-labelledby="settings-line">
      <h2 id="settings-line">WhatsApp line</h2>
      {line ? (
        <p>
          Session <a href={`/sessions/${line.sessionId}`}>{line.name}</a> ({line.sessionId}): {line.state}
        </p>
      ) : (
        <EmptyState>No line: an owner links one of their WhatsApp sessions as the company's line.</EmptyState>
      )}
      <h3>Members' numbers</h3>
      {members.length === 0 ? (
        <EmptyState>No member has linked a number yet.</EmptyState>
      ) : (
        <DataTable headings={["Member", "Number", "Verified", "Receives"]}>
          {members.map((member) => (
            <tr>
              <td>{member.name}</td>
              <td>+{member.phone}</td>
              <td>{member.verified ? "verified" : "not verified"}</td>
              <td>{member.notify.map((kind) => KIND_LABELS[kind] ?? kind).join(", ")}</td>
            </tr>
          ))}
        </DataTable>
      )}
      <h3>Last notices</h3>
      {notices.length === 0 ? (
        <EmptyState>Nothing sent on the line yet.</EmptyState>
      ) : (
        <DataTable headings={["To", "Kind", "Status", "Queued", "Sent"]}>
          {notices.map((notice) => (
            <tr>
              <td>
                {notice.userName} (+{notice.phone})
              </td>
              <td>{KIND_LABELS[notice.kind] ?? notice.kind}</td>
              <td title={notice.error ?? undefined}>
                {notice.status}
                {notice.error ? <span class="muted"> ({notice.error})</span> : null}
              </td>
              <td>
                <Time value={notice.createdAt} />
              </td>
              <td>
                <Time value={notice.sentAt} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
