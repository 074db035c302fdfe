import type { AppFetch } from "./tools";

/**
 * The app's own fetch, for the MCP session object (durable-objects/mcp-session.ts): its tools run the
 * REST handlers in-process as the caller, and a Durable Object may not import the routers. The app
 * registers its fetch here when it is built (routes.ts), at module load of the Worker's entry, which
 * every isolate running the script (the object's included) evaluates before serving anything.
 */
let registered: AppFetch | undefined;

export function registerAppFetch(appFetch: AppFetch): void {
  registered = appFetch;
}

export function registeredAppFetch(): AppFetch {
  if (registered === undefined) throw new Error("the app's fetch is not registered (workers/mcp/routes.ts)");
  return registered;
}
