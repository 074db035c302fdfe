/** Keyword auto-reply rules (placeholder until implemented). */
export const AUTO_REPLIES_SCHEMA: readonly string[] = [];
export const autoRepliesApi = {};
