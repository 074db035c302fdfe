/**
 * Invite tokens that let an agent join a company (the onboarding prompt under /llms). HTTP in routes.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export { redeemInvite } from "./store";
