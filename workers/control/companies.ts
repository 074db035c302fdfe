import { createRouter } from "../http/openapi";

export const companyRoutes = createRouter();
