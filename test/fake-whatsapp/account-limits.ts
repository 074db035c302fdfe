/**
 * WhatsApp's limits on an account that reaches out too much, as the server enforces and announces them:
 *
 * - **Reach-out timelock**: the account may not start new chats until a time. The server refuses a
 *   companion's message to someone who never wrote to the account with `<ack class=message error=463>`
 *   (Baileys: `SenderReachoutTimelocked`), announces the lock with a `mex` notification
 *   (`NotificationUserReachoutTimelockUpdate`) and answers the `w:mex` query Baileys then makes
 *   (`xwa2_fetch_account_reachout_timelock`).
 * - **New-chat message cap**: how many new chats a cycle allows, announced with a `mex` notification
 *   (`MessageCappingInfoNotification`); WhatsApp's own clients stop at CAPPED, so the server only tells.
 *
 * Who "wrote to the account" is what the server delivered: every message handed to one of the account's
 * companions records its sender (by LID and number).
 */
import type { BinaryNode } from "@whiskeysockets/baileys";
import { userOf } from "./directory.ts";
import { type FakeWhatsApp, type LinkedDevice, SERVER_JID } from "./server.ts";

export const REACHOUT_TIMELOCKED = "463";

export interface ReachoutLock {
  until: Date;
  enforcementType?: string;
}

export interface NewChatCap {
  used: number;
  total: number;
  status: "NONE" | "FIRST_WARNING" | "SECOND_WARNING" | "CAPPED";
  cycleEndsAt: Date;
}

const seconds = (date: Date) => String(Math.floor(date.getTime() / 1000));

export class AccountLimits {
  private readonly locks = new Map<string, ReachoutLock>();
  /** Per account (its number), everyone who wrote to it: numbers and LIDs, without device or server. */
  private readonly heardFrom = new Map<string, Set<string>>();
  /** Messages refused with 463, as `<to> <id>`. */
  readonly refused: string[] = [];
  private nextNotification = 1;

  constructor(private readonly server: FakeWhatsApp) {
    server.deliveryHooks.push((jid, node) => this.noteSender(jid, node));
    server.messaging.refusals.push((sender, node) => this.refusalOf(sender, node));
    server.iqHandlers.set("w:mex", (device, iq) => this.answerMex(device, iq));
  }

  /** WhatsApp locks the account out of new chats until `lock.until`, and tells its devices. */
  lockReachout(account: string, lock: ReachoutLock): void {
    this.locks.set(account, lock);
    this.notify(account, "NotificationUserReachoutTimelockUpdate", {
      xwa2_notify_account_reachout_timelock: this.timelockOf(account),
    });
  }

  liftReachout(account: string): void {
    this.locks.delete(account);
    this.notify(account, "NotificationUserReachoutTimelockUpdate", {
      xwa2_notify_account_reachout_timelock: { is_active: false },
    });
  }

  /** WhatsApp tells the account's devices where it stands against the new-chat cap. */
  announceCap(account: string, cap: NewChatCap): void {
    this.notify(account, "MessageCappingInfoNotification", {
      xwa2_notify_new_chat_messages_capping_info_update: {
        used_quota: cap.used,
        total_quota: cap.total,
        capping_status: cap.status,
        cycle_end_timestamp: seconds(cap.cycleEndsAt),
        server_sent_timestamp: seconds(new Date()),
      },
    });
  }

  private timelockOf(account: string) {
    const lock = this.locks.get(account);
    if (!lock || lock.until.getTime() <= Date.now()) return { is_active: false };
    return {
      is_active: true,
      time_enforcement_ends: seconds(lock.until),
      enforcement_type: lock.enforcementType ?? "DEFAULT",
    };
  }

  private noteSender(deviceJid: string, node: BinaryNode): void {
    if (node.tag !== "message") return;
    const account = this.accountOfDevice(deviceJid);
    if (!account) return;
    const senders = this.heardFrom.get(account) ?? new Set<string>();
    for (const jid of [
      node.attrs.participant ?? node.attrs.from,
      node.attrs.sender_pn,
      node.attrs.participant_pn,
    ]) {
      if (jid) senders.add(userOf(jid));
    }
    this.heardFrom.set(account, senders);
  }

  /** 463 for a one-to-one message to someone who never wrote to a locked account. */
  private refusalOf(senderDevice: string, node: BinaryNode): string | undefined {
    const account = this.accountOfDevice(senderDevice);
    const to = node.attrs.to ?? "";
    if (!account || !this.timelockOf(account).is_active || !/@(s\.whatsapp\.net|lid)$/.test(to))
      return undefined;
    if (this.heardFrom.get(account)?.has(userOf(to))) return undefined;
    this.refused.push(`${to} ${node.attrs.id ?? ""}`);
    return REACHOUT_TIMELOCKED;
  }

  private answerMex(device: LinkedDevice, iq: BinaryNode): BinaryNode[] | undefined {
    const query = Array.isArray(iq.content) ? iq.content.find((child) => child.tag === "query") : undefined;
    const account = userOf(device.jid);
    const data =
      query?.attrs.query_id === "23983697327930364"
        ? { xwa2_fetch_account_reachout_timelock: this.timelockOf(account) }
        : undefined;
    if (!data) return undefined;
    return [{ tag: "result", attrs: {}, content: Buffer.from(JSON.stringify({ data })) }];
  }

  private notify(account: string, opName: string, data: object): void {
    for (const device of this.server.devices.values()) {
      if (userOf(device.jid) !== account || !this.server.isConnected(device.jid)) continue;
      this.server.deliver(device.jid, {
        tag: "notification",
        attrs: {
          from: SERVER_JID,
          type: "mex",
          id: `mex-${this.nextNotification++}`,
          t: seconds(new Date()),
        },
        content: [
          { tag: "update", attrs: { op_name: opName }, content: Buffer.from(JSON.stringify({ data })) },
        ],
      });
    }
  }

  private accountOfDevice(jid: string): string | undefined {
    const device = this.server.devices.get(jid);
    return device ? userOf(device.jid) : undefined;
  }
}
