import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const routinePages = new Hono<DashboardEnv>();
