import { type Env, isProduction } from "../../../workers/core/env";

/** Inclusive range of milliseconds between two broadcast sends. */
export interface GapRange {
  min: number;
  max: number;
}

/** The spec's random 10–20 s between messages: an anti-ban measure, not a performance knob. */
export const DEFAULT_GAP: GapRange = { min: 10_000, max: 20_000 };

/** The deprecated endpoint's `delay` bounds (the spec's 500–60000 ms), added to the random gap. */
export const LEGACY_DELAY_MIN_MS = 500;
export const LEGACY_DELAY_MAX_MS = 60_000;

/** 0 (no extra wait) or within the legacy bounds: the Worker validates; this guards other callers. */
export function clampDelay(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) return 0;
  return Math.min(LEGACY_DELAY_MAX_MS, Math.max(LEGACY_DELAY_MIN_MS, Math.floor(ms)));
}

const GAP_PATTERN = /^\s*(\d{1,9})\s*(?:-\s*(\d{1,9})\s*)?$/;

/** `"min-max"` or a single `"n"` (ms); null when the text is not a valid range. */
export function parseGap(text: string | undefined): GapRange | null {
  if (text === undefined) return null;
  const match = GAP_PATTERN.exec(text);
  if (!match) return null;
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : Number(match[2]);
  return min <= max ? { min, max } : null;
}

/**
 * The configured gap. Production ignores a value that would send faster than the spec allows, so a
 * test setting copied into a deployment cannot turn a broadcast into a ban; longer gaps are honoured.
 */
export function broadcastGap(env: Env): GapRange {
  const configured = parseGap(env.BROADCAST_GAP_MS);
  if (!configured) return DEFAULT_GAP;
  if (isProduction(env) && configured.min < DEFAULT_GAP.min) return DEFAULT_GAP;
  return configured;
}

/** A uniformly random whole number of ms in the range. */
export function pickGap(range: GapRange, random: () => number = Math.random): number {
  return range.min + Math.floor(random() * (range.max - range.min + 1));
}
