// Poll votes in the SessionDO: the bridge's `poll.vote` events fold into the stored poll's tally (shown
// by GET /api/messages/{sessionId}/{jid}/{messageId}) and each vote is delivered once as a `poll.vote`
// webhook; a repeated vote id, or an older vote arriving late, changes nothing.
import { describe, expect, it } from "vitest";
import { emit } from "../../../fake-bridge";
import { asKey, call } from "../../../helpers";
import {
  answers,
  type Connected,
  connected,
  endpoint,
  incoming,
  ME,
  ok,
  PEER,
  to,
  until,
} from "./fake-receivers";

const POLL = "3EB0POLL000000000001";
const OPTIONS = ["Approve", "Reject", "Ask for changes"];
const OTHER = "628133300033@s.whatsapp.net";
const T0 = 1_772_442_904_000;

type Tally = { options: Array<{ name: string; count: number; voters: string[] }>; totalVoters: number };

const sentPoll = (s: Connected) =>
  emit(s.link, 1, s.seq++, {
    kind: "message",
    live: true,
    message: {
      id: POLL,
      chat: PEER,
      sender: ME,
      fromMe: true,
      timestamp: T0,
      content: { type: "poll", question: "Hire a designer?", options: OPTIONS, selectableCount: 1 },
    },
  });

const vote = (s: Connected, id: string, voter: string, selectedOptions: string[], timestamp: number) =>
  emit(s.link, 1, s.seq++, {
    kind: "poll.vote",
    vote: {
      id,
      chat: PEER,
      pollId: POLL,
      voter,
      voterPhone: voter.split("@")[0],
      selectedOptions,
      timestamp,
    },
  });

async function tally(s: Connected, messageId = POLL): Promise<{ status: number; poll: Tally | null }> {
  const res = await call<{ data: { poll: Tally | null } }>(
    "GET",
    `/api/messages/${s.slug}/${PEER}/${messageId}`,
    {
      headers: asKey(s.key),
    },
  );
  return { status: res.status, poll: res.body.data?.poll ?? null };
}

const votesOf = (poll: Tally | null) => poll?.options.map(({ name, voters }) => [name, voters]);

describe("poll votes in the SessionDO", () => {
  it("keeps one current vote per voter on the poll (a newer vote replaces, an un-vote removes), each vote one poll.vote webhook, repeats ignored", async () => {
    const hook = endpoint("polls", ["poll.vote"]);
    answers.set(hook.url, ok);
    const s = await connected([hook]);
    await sentPoll(s);
    expect((await tally(s)).poll).toEqual({
      options: OPTIONS.map((name) => ({ name, count: 0, voters: [] })),
      totalVoters: 0,
    });

    await vote(s, "VOTE-1", PEER, ["Ask for changes"], T0 + 1_000);
    await vote(s, "VOTE-1", PEER, ["Ask for changes"], T0 + 1_000);
    await vote(s, "VOTE-2", OTHER, ["Approve"], T0 + 2_000);
    await vote(s, "VOTE-3", PEER, ["Approve"], T0 + 3_000);
    // A late copy of the peer's first vote must not undo the change.
    await vote(s, "VOTE-1", PEER, ["Ask for changes"], T0 + 1_000);
    const after = await tally(s);
    expect(after.status).toBe(200);
    expect(votesOf(after.poll)).toEqual([
      ["Approve", [PEER, OTHER]],
      ["Reject", []],
      ["Ask for changes", []],
    ]);
    expect(after.poll?.totalVoters).toBe(2);

    await vote(s, "VOTE-4", OTHER, [], T0 + 4_000);
    await vote(s, "VOTE-2", OTHER, ["Approve"], T0 + 2_000);
    expect(votesOf((await tally(s)).poll)).toEqual([
      ["Approve", [PEER]],
      ["Reject", []],
      ["Ask for changes", []],
    ]);

    await until(s, () => to("polls").length === 4);
    // Deliveries may overlap: their order is not the point, each vote once is.
    const events = to("polls")
      .map((request) => JSON.parse(request.body) as { event: string; data: { keyId: string } })
      .sort((a, b) => a.data.keyId.localeCompare(b.data.keyId));
    expect(events.map((event) => event.event)).toEqual(["poll.vote", "poll.vote", "poll.vote", "poll.vote"]);
    expect(events.map((event) => event.data)).toEqual([
      {
        keyId: "VOTE-1",
        pollId: POLL,
        remoteJid: PEER,
        voter: PEER,
        voterPhone: "628122200022",
        selectedOptions: ["Ask for changes"],
        timestamp: T0 + 1_000,
      },
      expect.objectContaining({ keyId: "VOTE-2", voter: OTHER, selectedOptions: ["Approve"] }),
      expect.objectContaining({ keyId: "VOTE-3", voter: PEER, selectedOptions: ["Approve"] }),
      expect.objectContaining({ keyId: "VOTE-4", voter: OTHER, selectedOptions: [] }),
    ]);
  });

  it("GET answers 404 for a message not in the chat, and a text message has no tally", async () => {
    const s = await connected([]);
    await incoming(s, "IN-TEXT-1");
    expect(await tally(s, "IN-TEXT-1")).toEqual({ status: 200, poll: null });
    expect((await tally(s, "NOPE-1")).status).toBe(404);
  });
});
