import { createRouter } from "../http/openapi";

export const labelRoutes = createRouter();
