/**
 * Projects, their workspaces, and goals. HTTP in routes.ts, workspaces.ts and goals.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export type { ProjectSchema } from "./schemas";
