import { createRouter } from "../http/openapi";

export const agentRoutes = createRouter();
