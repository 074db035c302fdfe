import type { BudgetWindow } from "../../db/schema";
import { utcMonth } from "../shared";

export { utcMonth };

/** The first instant a budget's window counts from: the month's start, or 0 for a lifetime budget. */
export const windowStart = (window: BudgetWindow, now: number): number =>
  window === "month" ? utcMonth(now).start : 0;

/** The share of a budget at which the board is warned (the soft threshold), before the hard stop. */
export const SOFT_THRESHOLD_PERCENT = 80;

export const softThreshold = (amountCents: number): number => (amountCents * SOFT_THRESHOLD_PERCENT) / 100;
