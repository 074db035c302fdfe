import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const issueBoardPage = new Hono<DashboardEnv>();
