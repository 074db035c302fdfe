import { createRouter } from "../http/openapi";

export const projectRoutes = createRouter();
