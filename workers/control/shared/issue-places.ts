import { rememberBounded } from "../../core/bounded-map";
import { UUID } from "./issue-keys";

/** Where an issue lives: its id and its company. */
export interface IssueLocation {
  id: string;
  companyId: string;
}

/** Bounds memory per isolate; the oldest entries go first. */
const MAX_LOCATIONS = 50_000;

/**
 * Id or identifier → (id, company), remembered per isolate. Safe to keep without invalidation because
 * all three never change: ids are fixed, identifiers are `<immutable prefix>-<n>` assigned once, and
 * issues do not move between companies. A deleted issue still "locates", and its IssueDO then finds
 * no row, which is the same 404. Kept here, beside the access checks, because the viewer gate reads
 * it too (roles.ts: which company a write under `/issues/{id}` is about).
 */
const locations = new Map<string, IssueLocation>();

const normalisedKey = (key: string) => (UUID.test(key) ? key.toLowerCase() : key.toUpperCase());

/** The issue's place if this isolate has seen it, by id or identifier (any case); never a query. */
export const knownIssueLocation = (key: string): IssueLocation | undefined =>
  locations.get(normalisedKey(key));

/** Remembers where the issue named `key` (its id or identifier) lives. */
export const rememberIssueLocation = (key: string, location: IssueLocation): void =>
  rememberBounded(locations, normalisedKey(key), location, MAX_LOCATIONS);
