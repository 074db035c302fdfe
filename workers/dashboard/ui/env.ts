import type { Hono } from "hono";
import type { Env } from "../../core/env";
import type { PublicUser } from "../../core/principal";
import type { ApiClient, ApiFetch } from "./api-client";

export type { ApiFetch };

/** Form fields of a dashboard POST, already checked for the CSRF token (`_csrf` removed). */
export type FormFields = Record<string, string>;

export type DashboardVariables = {
  requestId: string;
  /** The signed-in user (every dashboard page but /login). */
  viewer: PublicUser;
  /** The CSRF token of the viewer's web session: every form carries it as `_csrf`. */
  csrf: string;
  /** The service's own API, called in-process as the viewer (see api-client.ts). */
  api: ApiClient;
  /** The parsed body of a POST (set by the CSRF middleware). */
  form: FormFields;
  /**
   * A page whose form sends the browser on to another origin (the OAuth consent page: the app's
   * redirect URI), which the Content-Security-Policy's form-action must then name.
   */
  formTarget?: string;
};

export type DashboardEnv = { Bindings: Env; Variables: DashboardVariables };
export type DashboardApp = Hono<DashboardEnv>;
