import { Hono } from "hono";
import type { AppEnv } from "../../core/env";
import { database } from "../../db/client";
import { unauthorized } from "../../http/errors";
import { relayUpgrade, requireUpgrade } from "../../http/upgrade";
import { runDispatcher } from "../wakes";
import { apiBaseUrl, runnerForToken } from "./store";

/**
 * Where a registered runner dials in (`/runner/v1/link`, a WebSocket), with `Authorization: Bearer
 * <runner token>`. The RunDispatcher owns the socket; the runner it belongs to is named in a header
 * only this route sets, so the dispatcher hands the link only runs of the companies that runner serves.
 * Nothing else opens this link: not a user key, not BRIDGE_TOKEN.
 */
export const runnerLinkRoutes = new Hono<AppEnv>();

runnerLinkRoutes.get("/link", requireUpgrade, async (c) => {
  const presented = c.req.header("Authorization")?.replace(/^Bearer\s+/i, "") ?? "";
  const runner = await runnerForToken(database(c.env.DB), presented);
  if (!runner) throw unauthorized("Invalid runner token");
  const forwarded = new Request(c.req.raw);
  forwarded.headers.set("X-Runner-Id", runner.id);
  forwarded.headers.set("X-Platform-Api-Url", apiBaseUrl(new URL(c.req.url).origin));
  return relayUpgrade(runDispatcher(c.env).fetch(forwarded));
});
