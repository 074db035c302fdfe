// A small HTTP client for end-to-end suites: logs in as the local admin and calls the API with a key.
export interface ApiResponse<T> {
  status: number;
  body: T;
}

export interface ApiClient {
  readonly key: string;
  call<T = { status: boolean; message: string; data: unknown }>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<ApiResponse<T>>;
}

export const ADMIN = { email: "admin@example.com", password: "change-me-locally" };

/** Logs in with the .dev.vars admin, creates an API key, and returns a client using it. */
export function adminClient(baseUrl: string): Promise<ApiClient> {
  return clientFor(baseUrl, ADMIN);
}

/** A second, ordinary user (role OWNER unless given) created by `admin`, with an API key of their own. */
export async function ownerClient(
  baseUrl: string,
  admin: ApiClient,
  label = "owner",
  role: "OWNER" | "STAFF" = "OWNER",
): Promise<ApiClient> {
  const credentials = {
    email: `${label}-${Math.random().toString(36).slice(2, 10)}@example.test`,
    password: "a-long-enough-password",
  };
  const created = await admin.call("POST", "/api/users", { name: label, ...credentials, role });
  if (created.status !== 200 && created.status !== 201)
    throw new Error(`creating ${label}: ${created.status} ${JSON.stringify(created.body)}`);
  return clientFor(baseUrl, credentials);
}

/** Logs in as `credentials`, creates an API key, and returns a client using it. */
export async function clientFor(
  baseUrl: string,
  credentials: { email: string; password: string },
): Promise<ApiClient> {
  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(credentials),
  });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${await login.text()}`);
  const { data } = (await login.json()) as { data: { csrfToken: string } };
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const created = await fetch(`${baseUrl}/api/user/api-key`, {
    method: "POST",
    headers: { cookie, "X-CSRF-Token": data.csrfToken },
  });
  const key = ((await created.json()) as { data: { apiKey: string } }).data.apiKey;
  return {
    key,
    async call<T>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { "X-API-Key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
    },
  };
}

/** Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
