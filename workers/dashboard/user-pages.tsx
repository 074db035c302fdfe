import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const userPages = new Hono<DashboardEnv>();
