/**
 * Prints the OpenAPI document built from the same zod schemas the running app validates with.
 * `npm run docs:openapi` writes it to docs/openapi.json; a workerd test fails while that file is stale.
 */
import "@hono/zod-openapi"; // first, as in workers/index.ts: later zod schemas get `.openapi()`
import { createApp, OPENAPI_CONFIG } from "../workers/app";

console.log(JSON.stringify(createApp().getOpenAPI31Document(OPENAPI_CONFIG), null, 2));
