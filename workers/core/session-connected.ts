import type { Env } from "./env";

/**
 * What else happens when a WhatsApp session (re)connects, registered by the parts that care (the
 * company line sends the notices it queued while its line was down: control/line/reconnect.ts). The
 * SessionDO calls `sessionConnected` and knows nothing of who listens, so the gateway's object does not
 * import the control plane.
 */
export type SessionConnectedHook = (
  env: Env,
  sessionId: string,
  waitUntil: (promise: Promise<unknown>) => void,
) => Promise<void>;

const hooks: SessionConnectedHook[] = [];

export function onSessionConnected(hook: SessionConnectedHook): void {
  if (!hooks.includes(hook)) hooks.push(hook);
}

/** Runs every hook for the session (by its internal id); one failing does not stop the others. */
export async function sessionConnected(
  env: Env,
  sessionId: string,
  waitUntil: (promise: Promise<unknown>) => void,
): Promise<void> {
  await Promise.all(
    hooks.map((hook) =>
      hook(env, sessionId, waitUntil).catch((error: unknown) =>
        console.error(
          JSON.stringify({
            level: "error",
            msg: "session connected hook failed",
            sessionId,
            error: String(error),
          }),
        ),
      ),
    ),
  );
}
