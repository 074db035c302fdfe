import type { ExecutionContext } from "hono";
import type { Env } from "../core/env";

/** The app's own fetch, run in-process with the bindings and execution context of a request. */
export type AppFetch = (request: Request, env: Env, ctx: ExecutionContext) => Promise<Response>;

/**
 * The app's own fetch, for code that runs REST handlers in-process as a caller and may not import the
 * routers: the MCP session object (durable-objects/mcp-session.ts) and the company line's sends
 * (control/line). The app registers its fetch here when it is built (mcp/routes.ts), at module load of
 * the Worker's entry, which every isolate running the script (the object's included) evaluates before
 * serving anything. It lives in http/ so that control/line need not import mcp/ (which imports it).
 */
let registered: AppFetch | undefined;

export function registerAppFetch(appFetch: AppFetch): void {
  registered = appFetch;
}

export function registeredAppFetch(): AppFetch {
  if (registered === undefined) throw new Error("the app's fetch is not registered (workers/mcp/routes.ts)");
  return registered;
}
