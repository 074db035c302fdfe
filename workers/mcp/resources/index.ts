import { chatResource } from "./chat";
import { issueResources } from "./issues";
import type { ResourceDefinition } from "./registry";

export type { ResourceDefinition } from "./registry";

/** Every resource template /mcp serves (one line per domain's list). */
export const RESOURCES: readonly ResourceDefinition[] = [...issueResources, chatResource];
