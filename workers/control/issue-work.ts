import { createRouter } from "../http/openapi";

export const issueWorkRoutes = createRouter();
