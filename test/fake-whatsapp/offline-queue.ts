/**
 * WhatsApp's offline queue for companion devices: the server keeps every `message` (and `notification`,
 * e.g. a group change) it hands a device until the device acknowledges it — a delivery `<receipt>`
 * (Baileys sends it before it reports the message to its app) or an `<ack class="message">` (or
 * `class="notification"`) naming its id. A device that was away, or that
 * went before its acknowledgement arrived (a bridge killed mid-message), gets them again at its next
 * login, in order, each marked `offline`, followed by `<ib><offline count=…/></ib>`.
 */
import type { BinaryNode } from "@whiskeysockets/baileys";

export class OfflineQueue {
  private readonly waiting = new Map<string, BinaryNode[]>();
  /** Devices whose acknowledgements the server does not hear (they never reach it). */
  private readonly deaf = new Set<string>();

  keep(jid: string, node: BinaryNode): void {
    const queue = this.waiting.get(jid) ?? [];
    queue.push(node);
    this.waiting.set(jid, queue);
  }

  /** What `jid` has not acknowledged, in order, marked as delivered from the offline queue. */
  waitingFor(jid: string): BinaryNode[] {
    return (this.waiting.get(jid) ?? []).map((node, index) => ({
      ...node,
      attrs: { ...node.attrs, offline: String(index + 1) },
    }));
  }

  /** How many messages `jid` has not acknowledged. */
  count(jid: string): number {
    return this.waiting.get(jid)?.length ?? 0;
  }

  /**
   * From now on (until `hear`), `jid`'s acknowledgements are lost on the way, as when the process
   * holding it is killed between reading a message and its receipt reaching the server.
   */
  ignore(jid: string): void {
    this.deaf.add(jid);
  }

  hear(jid: string): void {
    this.deaf.delete(jid);
  }

  /** A stanza from `jid`: a receipt or a message ack removes the messages it names from its queue. */
  acknowledged(jid: string, node: BinaryNode): void {
    if (this.deaf.has(jid)) return;
    const isAck =
      node.tag === "receipt" ||
      (node.tag === "ack" && (node.attrs.class === "message" || node.attrs.class === "notification"));
    const queue = this.waiting.get(jid);
    if (!isAck || !queue) return;
    const ids = new Set([node.attrs.id, ...listedIds(node)]);
    this.waiting.set(
      jid,
      queue.filter((message) => !ids.has(message.attrs.id)),
    );
  }
}

/** A receipt for several messages names the rest in `<list><item id=…/></list>`. */
function listedIds(node: BinaryNode): string[] {
  if (!Array.isArray(node.content)) return [];
  return node.content
    .filter((child) => child.tag === "list" && Array.isArray(child.content))
    .flatMap((list) => (list.content as BinaryNode[]).map((item) => item.attrs.id ?? ""));
}
