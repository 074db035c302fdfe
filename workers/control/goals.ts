import { createRouter } from "../http/openapi";

export const goalRoutes = createRouter();
