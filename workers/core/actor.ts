import type { ActorType, AgentRole, Role } from "../db/schema";
import type { PublicUser } from "./principal";

/**
 * Who is calling the control plane: a board user (any foundation user; what they may touch is
 * decided by company membership) or an agent holding one of its keys.
 */
export type Actor = BoardActor | AgentActor;

export interface BoardActor {
  type: "board";
  userId: string;
  user: PublicUser;
  /**
   * Whether the request may change state (any method but GET, HEAD, OPTIONS, minus the few writes a
   * viewer may make): company access checks then refuse a viewer (control/shared/roles.ts).
   */
  mutating: boolean;
  /**
   * Set when the request's key is limited to one company (core/scopes.ts): every other company is
   * then as unknown to it as another tenant's (control/shared/access.ts).
   */
  onlyCompanyId?: string;
  /**
   * A company in which D1 confirmed, earlier in this request, that the user is a member who may write
   * (the viewer gate, control/shared/roles.ts): the access checks for it need not ask D1 again.
   */
  confirmedMemberOf?: string;
}

/**
 * An agent as its key proves it. Only identity and role: anything that changes with work (budget,
 * spend, status details) is read from D1 where it matters, so the cached key stays small and correct.
 */
export interface AgentActor {
  type: "agent";
  agentId: string;
  companyId: string;
  role: AgentRole;
  keyId: string;
  /** Set when the key is a run-scoped key minted for one heartbeat run. */
  runId: string | null;
}

/**
 * The serialisable part of an actor: what crosses into an IssueDO and what the activity log and
 * authorship columns record.
 */
export type ActorRef =
  | { type: "board"; userId: string }
  | {
      type: "agent";
      agentId: string;
      companyId: string;
      /**
       * The role the agent's key proved for this request (absent when the ref was built without a
       * key). Current: a role change invalidates the agent's keys in the Keyring before it answers.
       */
      role?: AgentRole;
    };

export const refOf = (actor: Actor): ActorRef =>
  actor.type === "board"
    ? { type: "board", userId: actor.userId }
    : { type: "agent", agentId: actor.agentId, companyId: actor.companyId, role: actor.role };

/** The platform itself acting (a schedule tick, the runner releasing a dead run's issue), named by part. */
export interface SystemActor {
  type: "system";
  process: "routines" | "runner";
}

/** `{actorType, actorId}` as the activity log stores them. */
export function activityActor(actor: ActorRef | SystemActor): { actorType: ActorType; actorId: string } {
  if (actor.type === "system") return { actorType: "system", actorId: actor.process };
  return actor.type === "board"
    ? { actorType: "user", actorId: actor.userId }
    : { actorType: "agent", actorId: actor.agentId };
}

/** Authorship columns (`createdByUserId` / `createdByAgentId` and the like) for a row the actor writes. */
export function authorColumns(actor: ActorRef): { userId: string | null; agentId: string | null } {
  return actor.type === "board"
    ? { userId: actor.userId, agentId: null }
    : { userId: null, agentId: actor.agentId };
}

/**
 * What a write's own commit re-checks when the request was authenticated from this isolate's recent
 * answer (auth/agent-key-reads.ts, auth/user-key-reads.ts) instead of the Keyring: the key still
 * exists, is not revoked or expired, and its owner still holds the role (and, for an agent, a status
 * that may work) the recent answer said. D1 is where every revocation commits first, so a guard in
 * the same transaction as the write sees a revocation the moment it is committed, whichever isolate
 * made it: as strict as asking the Keyring, without the Durable Object hop every write paid for it
 * (issue 31; auth/credential-guard.ts builds the statement).
 */
export type CredentialGuard =
  | { kind: "agent"; keyId: string; agentId: string; role: AgentRole }
  | {
      kind: "user";
      keyId: string;
      userId: string;
      role: Role;
      /**
       * The company in whose path the write runs, when the viewer gate took the user's role there from
       * the isolate's recent D1 answer (control/shared/memberships.ts): the commit checks the user is
       * still an owner or member of it.
       */
      memberOf?: string;
    };
