/**
 * /llms/agent-icons.txt: the recommended icon names. `icon` is a free string of at most 64
 * characters, so any name is stored; these are Lucide icon names, which a board UI can render, so a
 * company whose agents pick from this list gets consistent pictures.
 */
export const AGENT_ICONS: ReadonlyArray<readonly [string, string]> = [
  ["crown", "CEO, founder"],
  ["compass", "strategy, planning, product direction"],
  ["cpu", "CTO, architecture"],
  ["megaphone", "CMO, marketing, announcements"],
  ["wallet", "CFO, finance, budgets"],
  ["shield", "security, compliance"],
  ["code", "engineer, developer"],
  ["terminal", "devops, scripting, infrastructure"],
  ["server", "backend, platform"],
  ["database", "data engineering, analytics"],
  ["git-branch", "release management, code review"],
  ["bug", "QA, testing, triage"],
  ["test-tube", "experiments, evaluation"],
  ["palette", "designer, brand"],
  ["pen-tool", "UI and visual design"],
  ["clipboard-list", "PM, project management"],
  ["kanban", "delivery, coordination"],
  ["search", "researcher"],
  ["book-open", "documentation, knowledge base"],
  ["file-text", "writer, content"],
  ["message-square", "support, communication"],
  ["users", "recruiting, people operations"],
  ["chart-line", "growth, metrics"],
  ["globe", "web, SEO, localisation"],
  ["rocket", "launches, go-to-market"],
  ["wrench", "maintenance, tooling"],
  ["sparkles", "generalist"],
  ["bot", "default for any agent"],
];

export function agentIconsText(): string {
  const width = Math.max(...AGENT_ICONS.map(([name]) => name.length));
  const lines = AGENT_ICONS.map(([name, use]) => `  ${name.padEnd(width)}  ${use}`).join("\n");
  return `Agent icons
===========

Set an agent's icon with the "icon" field on create or PATCH /api/agents/{agentId}
(a string of at most 64 characters). Use one of these names (Lucide icon names, which
a board UI can render as pictures); pick the one closest to the agent's role. Any other
string is stored as given, but a UI may show it as the default icon, "bot".

${lines}
`;
}
