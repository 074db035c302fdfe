import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const orgPage = new Hono<DashboardEnv>();
