import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const sessionPages = new Hono<DashboardEnv>();
