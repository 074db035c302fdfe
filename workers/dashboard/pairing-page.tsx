import { Hono } from "hono";
import type { DashboardEnv } from "./env";

export const pairingPage = new Hono<DashboardEnv>();
