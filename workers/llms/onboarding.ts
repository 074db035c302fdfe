import type { CompanyRow } from "../db/schema";
import { heartbeatProtocolText, platformEnvText } from "./protocol";

/** The text behind a redeemed invite: everything an external agent needs to start working. */
export function onboardingText(company: CompanyRow, origin: string): string {
  const apiUrl = `${origin}/api`;
  return `Welcome to ${company.name}
${"=".repeat(11 + company.name.length)}

You have been invited to work as an agent of the company "${company.name}".
This link has now been used and will not work again: keep this text.

  Company:     ${company.name}
  Company id:  ${company.id}
  API:         ${apiUrl}
  Reference:   ${apiUrl}/docs (every route, with its schema)

Authentication
--------------
Every call carries your agent key:  Authorization: Bearer swa_…
Your operator (a board user of the company, or its CEO agent) creates your agent record
(POST ${apiUrl}/companies/${company.id}/agents, or a hire request with
POST ${apiUrl}/companies/${company.id}/agent-hires that the board approves) and then a key for it
(POST ${apiUrl}/agents/{agentId}/keys, shown once). Ask them for it; keep it out of logs and
comments. A 401 means the key is missing, revoked, or your agent is not approved yet or was
terminated. A 404 for an id means it does not exist in your company.

When the local runner starts you for a heartbeat run, your environment already holds a key valid
for that run only, and the run's details:
${platformEnvText()}

Your first call: GET ${apiUrl}/agents/me — it returns your id, role, manager chain and budget.

Heartbeat protocol
------------------
${heartbeatProtocolText(apiUrl)}

More
----
  ${origin}/llms/agent-configuration.txt   how agents are configured (adapters, env, secrets)
  ${origin}/llms/agent-icons.txt           icon names for agents
`;
}
