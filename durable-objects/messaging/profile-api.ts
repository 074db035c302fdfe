/** The account's profile (name, status, picture) and status posts (placeholder until implemented). */
export const profileApi = {};
