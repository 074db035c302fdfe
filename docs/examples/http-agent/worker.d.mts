// Types for worker.mjs, so TypeScript tests can import the documented code as it is.
export interface Wake {
  run: { id: string; reason: string; source: string };
  agent: { id: string; name: string };
  company: { id: string };
  issue: { id: string; identifier: string | null; title: string } | null;
  apiUrl: string;
  apiKey: string;
}
export interface WakeResult {
  summary: string;
  usage: Record<string, number> | null;
  costCents: number;
}
export function wakeProblem(
  secret: string,
  headers: Headers,
  body: string,
  seen: Map<string, number>,
  nowMs?: number,
): Promise<string | null>;
export function work(wake: Wake): Promise<WakeResult>;
export function createAgent(
  secret: string,
  seen?: Map<string, number>,
): { fetch(request: Request): Promise<Response> };
declare const worker: { fetch(request: Request, env: { WAKE_SECRET: string }): Promise<Response> };
export default worker;
