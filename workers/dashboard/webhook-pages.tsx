import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const webhookPages = new Hono<DashboardEnv>();
