import type { NetworkEvent } from "../../bridge/src/messaging-protocol";
import type { SessionContext } from "./context";

type GroupsEvent = Extract<NetworkEvent, { kind: "groups" }>;
type ParticipantsEvent = Extract<NetworkEvent, { kind: "group.participants" }>;

/** Keeps the group table in sync and emits group.upsert / group.update (placeholder). */
export function applyGroupsEvent(_ctx: SessionContext, _event: GroupsEvent): void {}

/** Applies a membership change and emits group.participant (placeholder). */
export function applyParticipantsEvent(_ctx: SessionContext, _event: ParticipantsEvent): void {}

export const GROUPS_SCHEMA: readonly string[] = [];
export const groupsApi = {};
