import { createRouter } from "../http/openapi";

export const issueRoutes = createRouter();
