import { createRouter } from "../http/openapi";

/** Placeholder router; routes land with their module. */
export const autoRepliesRoutes = createRouter();
