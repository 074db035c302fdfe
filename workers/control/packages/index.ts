/**
 * Company packages: export, and import previewed then applied all at once. Other domains use nothing
 * here; the dashboard packs and unpacks archives for downloads and uploads and shows import plans. The HTTP routes
 * (routes.ts) are mounted by ../routes.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export { packTarGz, unpackTarGz } from "./archive";
export type { ImportPlan, PlanEntry } from "./plan";
