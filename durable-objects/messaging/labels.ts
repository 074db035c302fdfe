/** Labels and chat labels, kept in the session (placeholder until implemented). */
export const LABELS_SCHEMA: readonly string[] = [];
export const labelsApi = {};
