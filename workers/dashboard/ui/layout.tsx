import type { Child } from "hono/jsx";
import type { PublicUser } from "../../core/principal";
import { SCRIPT_URL, STYLESHEET_URL } from "./assets";

/** The top-level sections; the current one is marked `aria-current="page"` in the navigation. */
export type Section =
  | "home"
  | "sessions"
  | "api-key"
  | "phone"
  | "users"
  | "companies"
  | "runners"
  | "inbox"
  | "mine";

export type CompanyTab =
  | "overview"
  | "issues"
  | "agents"
  | "org"
  | "projects"
  | "approvals"
  | "costs"
  | "routines"
  | "secrets"
  | "activity"
  | "package"
  | "members"
  | "runners"
  | "settings";

export interface CompanyNav {
  id: string;
  name: string;
  tab: CompanyTab;
}

export interface PageProps {
  title: string;
  /** Absent only on the sign-in page. */
  viewer?: PublicUser;
  csrf?: string;
  section?: Section;
  /** Company pages get the company's own tab bar under the heading. */
  company?: CompanyNav;
  /** A one-off confirmation from the previous request ("Session created"). */
  flash?: string | null;
  children?: Child;
}

const NAV: ReadonlyArray<{ section: Section; href: string; label: string; superadminOnly?: boolean }> = [
  { section: "sessions", href: "/sessions", label: "Sessions" },
  { section: "companies", href: "/companies", label: "Companies" },
  { section: "inbox", href: "/notifications", label: "Inbox" },
  { section: "mine", href: "/mine", label: "Mine" },
  { section: "runners", href: "/runners", label: "Runners" },
  { section: "api-key", href: "/api-key", label: "API key" },
  { section: "phone", href: "/phone", label: "Your phone" },
  { section: "users", href: "/users", label: "Users", superadminOnly: true },
];

const COMPANY_TABS: ReadonlyArray<{ tab: CompanyTab; path: string; label: string }> = [
  { tab: "overview", path: "", label: "Overview" },
  { tab: "issues", path: "/issues", label: "Issues" },
  { tab: "agents", path: "/agents", label: "Agents" },
  { tab: "org", path: "/org", label: "Org chart" },
  { tab: "projects", path: "/projects", label: "Projects and goals" },
  { tab: "approvals", path: "/approvals", label: "Approvals" },
  { tab: "costs", path: "/costs", label: "Costs" },
  { tab: "routines", path: "/routines", label: "Routines" },
  { tab: "secrets", path: "/secrets", label: "Secrets" },
  { tab: "activity", path: "/activity", label: "Activity" },
  { tab: "package", path: "/package", label: "Import and export" },
  { tab: "members", path: "/members", label: "Members" },
  { tab: "runners", path: "/runners", label: "Runners" },
  { tab: "settings", path: "/settings", label: "Settings" },
];

function TopBar({ viewer, csrf, section }: Pick<PageProps, "viewer" | "csrf" | "section">) {
  return (
    <header class="top">
      <div class="bar">
        <a class="brand" href="/">
          Switchboard
        </a>
        {viewer && (
          <nav aria-label="Main">
            <ul>
              {NAV.filter((item) => !item.superadminOnly || viewer.role === "SUPERADMIN").map((item) => (
                <li>
                  <a href={item.href} aria-current={item.section === section ? "page" : undefined}>
                    {item.label}
                    {item.section === "inbox" && (
                      <span class="count" data-unread-count data-viewer={viewer.id} hidden>
                        {" "}
                      </span>
                    )}
                    {item.section === "mine" && (
                      <span class="count" data-mine-unread-count hidden>
                        {" "}
                      </span>
                    )}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )}
        {viewer && (
          <div class="who">
            <span>
              {viewer.name} <span class="sr-only">({viewer.role})</span>
            </span>
            <form method="post" action="/logout" class="inline">
              <input type="hidden" name="_csrf" value={csrf} />
              <button type="submit">Sign out</button>
            </form>
          </div>
        )}
      </div>
    </header>
  );
}

export function CompanyTabs({ company }: { company: CompanyNav }) {
  return (
    <nav class="subnav" aria-label={`${company.name} sections`}>
      <ul>
        {COMPANY_TABS.map((item) => (
          <li>
            <a
              href={`/companies/${company.id}${item.path}`}
              aria-current={item.tab === company.tab ? "page" : undefined}
            >
              {item.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export function Page(props: PageProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Switchboard`}</title>
        <link rel="stylesheet" href={STYLESHEET_URL} />
        <script src={SCRIPT_URL} defer />
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <TopBar viewer={props.viewer} csrf={props.csrf} section={props.section} />
        <main id="main">
          {props.company && (
            <p class="muted">
              <a href="/companies">Companies</a> /{" "}
              <a href={`/companies/${props.company.id}`}>{props.company.name}</a>
            </p>
          )}
          <h1>{props.title}</h1>
          {props.company && <CompanyTabs company={props.company} />}
          {props.flash && (
            <p class="flash" role="status">
              {props.flash}
            </p>
          )}
          {props.children}
        </main>
      </body>
    </html>
  );
}
