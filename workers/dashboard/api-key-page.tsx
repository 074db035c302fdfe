import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const apiKeyPage = new Hono<DashboardEnv>();
