import type { ConnectedApp } from "../../oauth";
import { ActionButton, DataTable, EmptyState, Time } from "../ui/components";

function limitOf(app: ConnectedApp): string {
  if (app.grant.sessionId) return `session ${app.grant.sessionId}`;
  if (app.grant.companyId) return `company ${app.grant.companyId}`;
  return "none";
}

/** The apps the user let in through OAuth (Claude, Cursor…): what each may do, and Revoke. */
export function ConnectedAppsPanel(props: { apps: ConnectedApp[]; csrf: string }) {
  return (
    <section class="panel" aria-labelledby="connected-apps-heading">
      <h2 id="connected-apps-heading">Connected apps</h2>
      <p class="muted">
        MCP clients you signed in with OAuth instead of a key. Each acts as you, with only the scopes and
        limit you chose. Revoking one cuts it off at once.
      </p>
      {props.apps.length === 0 ? (
        <EmptyState>No connected apps.</EmptyState>
      ) : (
        <DataTable headings={["App", "Scopes", "Limited to", "Connected", "Last used", ""]}>
          {props.apps.map((app) => (
            <tr>
              <td>{app.clientName}</td>
              <td>{app.grant.scopes.join(", ")}</td>
              <td>{limitOf(app)}</td>
              <td>
                <Time value={app.createdAt} />
              </td>
              <td>{app.lastUsedAt ? <Time value={app.lastUsedAt} /> : "never"}</td>
              <td>
                <ActionButton
                  action={`/api-key/apps/${encodeURIComponent(app.grantId)}/revoke`}
                  csrf={props.csrf}
                  label={`Revoke ${app.clientName}`}
                  variant="danger"
                  confirm={`Revoke ${app.clientName}? It stops working at once.`}
                />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
