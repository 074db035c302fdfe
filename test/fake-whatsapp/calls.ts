/**
 * Calls on the fake server, as WhatsApp signals them to a linked companion (which cannot take a call,
 * only see it and reject it): an offer is `<call from=<caller> id t notify><offer call-id call-creator
 * [caller_pn]>` with the media it proposes (`audio`, plus `video` for a video call) — Baileys' handleCall
 * reads `call-id`, `call-creator` (or `from`), `caller_pn` (the number of a caller known by LID),
 * `video`, and `type=group`/`group-jid` — and the companion acks it (`<ack class=call>`). A companion's
 * `<call to><reject call-id call-creator count>` (Baileys' rejectCall, which waits for an answer with its
 * id) is recorded, checked against the offer it rejects and answered with `<ack class=call type=reject>`,
 * and the caller is told (`rejectionsFor`).
 */
import { randomBytes } from "node:crypto";
import { type BinaryNode, getBinaryNodeChild } from "@whiskeysockets/baileys";
import { type Account, lidJid, pnJid } from "./directory.ts";

export interface CallHost {
  /** Hands a stanza to a companion's live connection (server.ts `deliver`). */
  deliver(jid: string, node: BinaryNode): void;
  log(line: string): void;
}

export interface OfferOptions {
  /** Which of the caller's addresses the call comes from (WhatsApp calls more and more by LID). */
  via?: "pn" | "lid";
  video?: boolean;
  /** The caller's push name (`notify`). */
  name?: string;
  /** A group call: the group it rings in (`type=group`, `group-jid`). */
  group?: string;
}

export interface CallOffer {
  callId: string;
  /** The call stanza's own id (what the companion's ack names). */
  stanzaId: string;
  /** The JID the call came from, and its creator: a rejection must name this one. */
  from: string;
  caller: Account;
  to: string;
  video: boolean;
}

/** A `<call><reject>` a companion sent, with what was wrong with it (empty when well formed). */
export interface CallRejection {
  /** The companion that sent it. */
  by: string | undefined;
  to: string;
  callId: string;
  callCreator: string;
  problems: string[];
}

const now = () => String(Math.floor(Date.now() / 1000));
const newId = () => randomBytes(16).toString("hex").toUpperCase();

export class FakeCalls {
  readonly offers: CallOffer[] = [];
  readonly rejections: CallRejection[] = [];

  constructor(private readonly host: CallHost) {}

  /** `caller` rings the companion `companionJid`: WhatsApp's offer stanza. */
  offer(companionJid: string, caller: Account, options: OfferOptions = {}): CallOffer {
    const byLid = options.via === "lid";
    const from = byLid ? lidJid(caller) : pnJid(caller);
    const offer: CallOffer = {
      callId: newId(),
      stanzaId: newId().slice(0, 20),
      from,
      caller,
      to: companionJid,
      video: options.video === true,
    };
    this.offers.push(offer);
    const media: BinaryNode[] = [
      { tag: "audio", attrs: { enc: "opus", rate: "16000" } },
      { tag: "audio", attrs: { enc: "opus", rate: "8000" } },
      ...(offer.video ? [{ tag: "video", attrs: { enc: "vp8", dec: "vp8", orientation: "0" } }] : []),
      { tag: "net", attrs: { medium: "3" } },
      { tag: "encopt", attrs: { keygen: "2" } },
    ];
    this.host.deliver(companionJid, {
      tag: "call",
      attrs: {
        from,
        id: offer.stanzaId,
        t: now(),
        version: "2",
        platform: "android",
        ...(options.name ? { notify: options.name } : {}),
      },
      content: [
        {
          tag: "offer",
          attrs: {
            "call-id": offer.callId,
            "call-creator": from,
            ...(byLid ? { caller_pn: pnJid(caller) } : {}),
            ...(options.group ? { type: "group", "group-jid": options.group } : {}),
          },
          content: media,
        },
      ],
    });
    return offer;
  }

  /** Takes a companion's `<call>` (a rejection); false for any other stanza. */
  handle(source: { jid: string | undefined; send(node: BinaryNode): void }, node: BinaryNode): boolean {
    if (node.tag !== "call") return false;
    const reject = getBinaryNodeChild(node, "reject");
    if (reject) {
      const rejection = this.check(source.jid, node, reject);
      this.rejections.push(rejection);
      this.host.log(
        `call ${rejection.callId} rejected by ${source.jid} (${rejection.problems.join("; ") || "ok"})`,
      );
    }
    source.send({
      tag: "ack",
      attrs: {
        id: node.attrs.id ?? "",
        class: "call",
        from: node.attrs.to ?? "",
        ...(reject ? { type: "reject" } : {}),
      },
    });
    return true;
  }

  /** The well-formed rejections of calls `caller` made: what its phone shows as "declined". */
  rejectionsFor(caller: Account): CallRejection[] {
    const ids = new Set(this.offers.filter((offer) => offer.caller === caller).map((offer) => offer.callId));
    return this.rejections.filter(
      (rejection) => ids.has(rejection.callId) && rejection.problems.length === 0,
    );
  }

  private check(by: string | undefined, node: BinaryNode, reject: BinaryNode): CallRejection {
    const callId = reject.attrs["call-id"] ?? "";
    const callCreator = reject.attrs["call-creator"] ?? "";
    const to = node.attrs.to ?? "";
    const offer = this.offers.find((candidate) => candidate.callId === callId);
    const problems: string[] = [];
    if (!node.attrs.id) problems.push("no stanza id");
    if (!offer) problems.push(`no call ${callId} was offered`);
    else {
      if (offer.to !== by) problems.push(`call ${callId} was offered to ${offer.to}, not ${by}`);
      if (to !== offer.from) problems.push(`sent to ${to}, but the call came from ${offer.from}`);
      if (callCreator !== offer.from) problems.push(`call-creator ${callCreator}, but it is ${offer.from}`);
    }
    return { by, to, callId, callCreator, problems };
  }
}
