import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const approvalPages = new Hono<DashboardEnv>();
