// A complete small agent, run by a runner as a `process` agent's command (Node 20+, no dependencies).
// The runner starts it once per wake with the PLATFORM_* environment (docs/control-plane.md):
//   - woken for an issue assigned to it: check the issue out, read it, comment, mark it done;
//   - woken on someone else's issue (an @mention): read the issue and reply with a short review.
// Every call goes to $PLATFORM_API_URL (it ends in /api) with the run's own key.
const api = process.env.PLATFORM_API_URL;
const key = process.env.PLATFORM_API_KEY;
const task = process.env.PLATFORM_TASK_ID;

async function call(method, path, body) {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  console.log(`${method} /api${path} → ${response.status}`);
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const me = await call("GET", "/agents/me");
console.log(
  `I am ${me.name}, woken (${process.env.PLATFORM_WAKE_REASON}) about ${task || "nothing in particular"}`,
);
if (!task) process.exit(0); // a timer or manual wake with no issue: nothing to do this time

const { issue } = await call("GET", `/issues/${task}/heartbeat-context`);
if (issue.assigneeAgentId === me.id && ["todo", "in_progress"].includes(issue.status)) {
  // Atomic: exactly one agent gets a 200; anyone else gets a 409 and leaves the issue alone.
  await call("POST", `/issues/${task}/checkout`, {
    agentId: me.id,
    expectedStatuses: ["todo", "in_progress"],
  });
  console.log(`working on ${issue.identifier} "${issue.title}"`);
  await call("PATCH", `/issues/${task}`, {
    status: "done",
    comment: `Done in run ${process.env.PLATFORM_RUN_ID}.`,
  });
} else {
  await call("POST", `/issues/${task}/comments`, { body: `Reviewed ${issue.identifier}: looks good to me.` });
}
