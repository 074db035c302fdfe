// The local runner of `npm start`: registered for the local admin the first time with `allCompanies`,
// which lists by id the companies the admin created and attaches each one the admin creates later;
// never a company the admin joins by invite (that one runs someone else's agents on this machine, as
// this user, next to .dev.vars and this token: the admin attaches it explicitly or not at all). Its
// token is kept in <state dir>/local-runner.json (mode 0600) and handed to the runner on standard
// input, never in an environment variable (docs/security.md).
//
// A state file from before this rule keeps working: its runner was registered with the old wildcard,
// and migration 0015 (applied by `npm start` before this runs) listed for it, by id, the companies the
// admin created, dropping any joined one.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const RUNNER_NAME = "npm start (this machine)";

async function jsonCall(baseUrl, method, pathname, { cookie, csrf, body } = {}) {
  const response = await fetch(`${baseUrl}${pathname}`, {
    method,
    headers: {
      ...(cookie ? { cookie } : {}),
      ...(csrf ? { "X-CSRF-Token": csrf } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

async function signIn(baseUrl, email, password) {
  const login = await jsonCall(baseUrl, "POST", "/api/auth/login", { body: { email, password } });
  if (login.status !== 200) throw new Error(`signing in as ${email} failed (${login.status})`);
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0];
  return { cookie, csrf: login.body.data.csrfToken };
}

function readSaved(file) {
  if (!existsSync(file)) return null;
  try {
    const saved = JSON.parse(readFileSync(file, "utf8"));
    return typeof saved.runnerId === "string" && typeof saved.token === "string" ? saved : null;
  } catch {
    return null;
  }
}

/**
 * The local runner's token: the saved one (the state directory holds the database that knows it, so
 * they go together), else a new runner registered for the admin, serving the companies the admin
 * created and creates later.
 * @param {{ baseUrl: string, stateDir: string, email: string, password: string }} options
 * @returns {Promise<string>}
 */
export async function localRunnerToken({ baseUrl, stateDir, email, password }) {
  const file = path.join(stateDir, "local-runner.json");
  const saved = readSaved(file);
  if (saved) return saved.token;
  const session = await signIn(baseUrl, email, password);
  try {
    const created = await jsonCall(baseUrl, "POST", "/api/runners", {
      ...session,
      body: { name: RUNNER_NAME, allCompanies: true },
    });
    if (created.status !== 201) throw new Error(`registering the local runner failed (${created.status})`);
    writeFileSync(file, JSON.stringify({ runnerId: created.body.runner.id, token: created.body.token }), {
      mode: 0o600,
    });
    return created.body.token;
  } finally {
    await jsonCall(baseUrl, "POST", "/api/auth/logout", session).catch(() => undefined);
  }
}
