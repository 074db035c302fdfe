import { Hono } from "hono";
import type { z } from "zod";
import type { CompanySchema } from "../control/companies";
import type { SessionSchema } from "../gateway/sessions";
import { EmptyState, StatusBadge } from "./ui/components";
import type { DashboardEnv } from "./ui/env";
import { render } from "./ui/render";

type Session = z.infer<typeof SessionSchema>;
type Company = z.infer<typeof CompanySchema>;

function SessionsPanel({ sessions }: { sessions: Session[] }) {
  return (
    <section class="panel" aria-labelledby="home-sessions">
      <h2 id="home-sessions">WhatsApp sessions</h2>
      {sessions.length === 0 ? (
        <EmptyState>No sessions yet.</EmptyState>
      ) : (
        <ul>
          {sessions.map((s) => (
            <li>
              <a href={`/sessions/${encodeURIComponent(s.sessionId)}`}>{s.name}</a>{" "}
              <StatusBadge status={s.status} />
            </li>
          ))}
        </ul>
      )}
      <p>
        <a href="/sessions">All sessions and a new one</a>
      </p>
    </section>
  );
}

function CompaniesPanel({ companies }: { companies: Company[] }) {
  return (
    <section class="panel" aria-labelledby="home-companies">
      <h2 id="home-companies">Companies</h2>
      {companies.length === 0 ? (
        <EmptyState>You are not on the board of any company yet.</EmptyState>
      ) : (
        <ul>
          {companies.map((company) => (
            <li>
              <a href={`/companies/${company.id}`}>{company.name}</a>{" "}
              <span class="muted">{company.issuePrefix}</span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <a href="/companies">All companies and a new one</a>
      </p>
    </section>
  );
}

/** The start page: both halves of the product at a glance. */
export const homePage = new Hono<DashboardEnv>();

homePage.get("/", async (c) => {
  const [sessions, companies] = await Promise.all([
    c.var.api.get<Session[]>("/api/sessions"),
    c.var.api.get<Company[]>("/api/companies"),
  ]);
  return render(c, {
    title: "Overview",
    section: "home",
    children: (
      <div class="grid">
        <SessionsPanel sessions={sessions} />
        <CompaniesPanel companies={companies} />
      </div>
    ),
  });
});
