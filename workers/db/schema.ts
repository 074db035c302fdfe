/**
 * The whole D1 schema, one import for the rest of the code and for drizzle-kit (drizzle.config.ts).
 * Timestamps are integer milliseconds since the epoch; responses render them as ISO-8601. Secrets
 * never live here in plaintext: passwords are PBKDF2 hashes, tokens and keys SHA-256 hex digests.
 *
 * Each module imports only the ones above it in this list, never this file.
 */

export * from "./adapter-schema";
export * from "./automation-schema";
export * from "./bridge-schema";
export * from "./budget-schema";
export * from "./control-schema";
export * from "./event-log-schema";
export * from "./foundation-schema";
export * from "./issue-schema";
export * from "./line-origin-schema";
export * from "./line-schema";
export * from "./mcp-schema";
export * from "./member-schema";
export * from "./notification-schema";
export * from "./runner-schema";
