import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const issuePage = new Hono<DashboardEnv>();
