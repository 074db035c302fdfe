import {
  AUTO_REPLIES_ADDED_COLUMNS,
  AUTO_REPLIES_SCHEMA,
  autoRepliesApi,
} from "../messaging/bot/auto-replies";
import {
  BROADCAST_ADDED_COLUMNS,
  BROADCASTS_SCHEMA,
  broadcastsApi,
  broadcastWork,
} from "../messaging/broadcasts/broadcasts";
import { chatsApi } from "../messaging/chats/api";
import { PRESENCE_SCHEMA } from "../messaging/chats/presence";
import { CONFIG_SCHEMA } from "../messaging/config/session";
import { CONTACTS_SCHEMA, contactsApi } from "../messaging/contacts/store";
import type { Outcome, SessionContext, TimedWork } from "../messaging/context";
import { eventsApi } from "../messaging/events/log";
import { GROUPS_SCHEMA, groupsApi } from "../messaging/groups/store";
import { LABELS_SCHEMA, labelsApi } from "../messaging/labels/store";
import { LINE_RELAY_SCHEMA, lineRelayWork } from "../messaging/line/relay";
import { mediaRetentionWork } from "../messaging/media/retention";
import { messagesApi } from "../messaging/messages/api";
import { POLL_ADDED_COLUMNS } from "../messaging/messages/polls";
import { profileApi } from "../messaging/profile/api";
import {
  SCHEDULER_ADDED_COLUMNS,
  SCHEDULER_SCHEMA,
  scheduledWork,
  schedulerApi,
} from "../messaging/scheduler/scheduler";
import { type AddedColumn, MESSAGING_SCHEMA } from "../messaging/schema";
import { WEBHOOK_SCHEMA, webhooksApi, webhookWork } from "../messaging/webhooks/deliveries";
import { accessApi } from "./access-ended";

/**
 * Everything the Worker can ask a SessionDO about messaging, as one table of named handlers. The
 * object exposes it through a single RPC (`SessionDO.call`); `callSession` in the Worker keeps the
 * names, inputs and outputs typed end to end. A new capability is a new entry in a module's table.
 */
export const sessionApi = {
  ...messagesApi,
  ...chatsApi,
  ...contactsApi,
  ...groupsApi,
  ...labelsApi,
  ...profileApi,
  ...autoRepliesApi,
  ...schedulerApi,
  ...broadcastsApi,
  ...webhooksApi,
  ...eventsApi,
  ...accessApi,
};

export type SessionApi = typeof sessionApi;
export type SessionApiName = keyof SessionApi;
export type SessionApiInput<K extends SessionApiName> = Parameters<SessionApi[K]>[1];
export type SessionApiOutput<K extends SessionApiName> =
  Awaited<ReturnType<SessionApi[K]>> extends Outcome<infer O> ? O : never;

type AnyHandler = (ctx: SessionContext, input: unknown) => Outcome<unknown> | Promise<Outcome<unknown>>;

export function handlerFor(name: string): AnyHandler | null {
  if (!Object.hasOwn(sessionApi, name)) return null;
  return sessionApi[name as SessionApiName] as AnyHandler;
}

/** Tables of every messaging module, created when the object wakes. */
export const SESSION_SCHEMAS: readonly string[] = [
  ...CONFIG_SCHEMA,
  ...MESSAGING_SCHEMA,
  ...CONTACTS_SCHEMA,
  ...GROUPS_SCHEMA,
  ...LABELS_SCHEMA,
  ...AUTO_REPLIES_SCHEMA,
  ...SCHEDULER_SCHEMA,
  ...BROADCASTS_SCHEMA,
  ...WEBHOOK_SCHEMA,
  ...LINE_RELAY_SCHEMA,
  ...PRESENCE_SCHEMA,
];

/** Columns added to those tables since they first shipped (added when an object finds them missing). */
export const SESSION_ADDED_COLUMNS: readonly AddedColumn[] = [
  ...SCHEDULER_ADDED_COLUMNS,
  ...AUTO_REPLIES_ADDED_COLUMNS,
  ...BROADCAST_ADDED_COLUMNS,
  ...POLL_ADDED_COLUMNS,
];

/** Work the alarm runs: whatever is due, then the alarm is set for the earliest next time. */
export const TIMED_WORK: readonly TimedWork[] = [
  scheduledWork,
  broadcastWork,
  webhookWork,
  lineRelayWork,
  mediaRetentionWork,
];
