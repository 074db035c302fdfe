import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const costPage = new Hono<DashboardEnv>();
