/**
 * Company packages: export, and import previewed then applied all at once. Nothing here is used by
 * other domains; the HTTP routes (routes.ts) are mounted by ../routes.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export {};
