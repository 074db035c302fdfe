/**
 * Phone numbers behind the LIDs of group members. WhatsApp names members of a LID-addressed group by
 * LID and puts the number alongside: `phone_number` on each participant, `participant_pn` on the
 * author of a `w:gp2` notification. Baileys 7.0.0-rc14 keeps neither for later: it builds the
 * notification's stub message with `proto.WebMessageInfo.fromObject`, which drops the key's
 * `participantAlt`, so `group-participants.update` never has `authorPn`, and it does not store the
 * pairs from group metadata ("TODO: Store LID MAPPINGS"). The bridge reads them from the stanza and
 * the metadata itself, so the edge hears of members and authors by phone number, as it stores them.
 */
import {
  areJidsSameUser,
  type BinaryNode,
  type GroupMetadata,
  isLidUser,
  isPnUser,
  jidNormalizedUser,
} from "@whiskeysockets/baileys";
import { BoundedMap } from "./caches.ts";

type Member = Pick<GroupMetadata["participants"][number], "id" | "phoneNumber">;

export class GroupAddresses {
  private readonly phones = new BoundedMap<string, string>(10_000);

  /** The phone-number JID for a LID, when a group told us; any other JID is returned unchanged. */
  phoneOf(jid: string): string {
    if (!isLidUser(jid)) return jid;
    return this.phones.get(jidNormalizedUser(jid)) ?? jid;
  }

  /** The author of a `w:gp2` notification (`participant` + `participant_pn`), read off the stanza. */
  learnFromNotification(node: BinaryNode): void {
    this.learn(node.attrs.participant, node.attrs.participant_pn);
  }

  /** Members as group metadata or a participants update lists them (LID with `phoneNumber`). */
  learnFromMembers(members: readonly Member[] | undefined): void {
    for (const member of members ?? []) this.learn(member.id, member.phoneNumber);
  }

  private learn(lid: string | undefined, pn: string | undefined): void {
    if (lid && pn && isLidUser(lid) && isPnUser(pn)) {
      this.phones.set(jidNormalizedUser(lid), jidNormalizedUser(pn));
    }
  }
}

/** Whether the account (`me`: its phone-number JID and LID) is among `members`. */
export function isAccount(
  members: readonly Member[],
  me: { id?: string; lid?: string } | undefined,
): boolean {
  const own = [me?.id, me?.lid].filter((jid): jid is string => !!jid);
  return members.some((member) =>
    [member.id, member.phoneNumber].some((jid) => !!jid && own.some((mine) => areJidsSameUser(jid, mine))),
  );
}
