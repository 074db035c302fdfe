import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const companyPages = new Hono<DashboardEnv>();
