import type { NetworkEvent } from "../../bridge/src/messaging-protocol";
import type { SessionContext } from "./context";

type ContactsEvent = Extract<NetworkEvent, { kind: "contacts" }>;

/** Stores contact changes and emits `contact.update` (placeholder until implemented). */
export function applyContactsEvent(_ctx: SessionContext, _event: ContactsEvent): void {}

export const CONTACTS_SCHEMA: readonly string[] = [];
export const contactsApi = {};
