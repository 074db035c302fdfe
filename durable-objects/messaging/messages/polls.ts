import type { Content, PollVote } from "../../../bridge/src/protocol/messaging";
import type { AddedColumn } from "../schema";
import { findMessage, findMessageById, type MessageRow } from "./store";

/**
 * Votes on this account's polls, kept on the poll message itself (`poll_votes`): each voter's latest
 * vote, un-votes included (with no options) so that a late copy of an older vote cannot bring it back.
 * A vote message is applied once: the same id again, or a vote older than the voter's current one,
 * changes nothing.
 */
export const POLL_ADDED_COLUMNS: readonly AddedColumn[] = [
  { table: "messages", column: "poll_votes", definition: "TEXT" },
];

/** One voter's current vote, by voter JID in `poll_votes`. */
interface StoredVote {
  voteId: string;
  voterPhone: string | null;
  options: string[];
  timestamp: number;
}
type StoredVotes = Record<string, StoredVote>;

/** The tally as the API shows it: every option in the poll's order, with who chose it. */
export interface PollTally {
  options: Array<{ name: string; count: number; voters: string[] }>;
  /** People whose current vote counts (un-votes excluded). */
  totalVoters: number;
}

const votesOf = (row: Pick<MessageRow, "poll_votes">): StoredVotes =>
  row.poll_votes ? (JSON.parse(row.poll_votes) as StoredVotes) : {};

/** The poll a vote is about: in its chat, else by id (a voter known only by LID names another chat). */
function pollRow(sql: SqlStorage, vote: PollVote): MessageRow | null {
  const inChat = findMessage(sql, vote.chat, vote.pollId);
  if (inChat?.type === "POLL") return inChat;
  const byId = findMessageById(sql, vote.pollId);
  return byId?.type === "POLL" ? byId : null;
}

/**
 * Records a vote on its poll; returns the poll's chat when the vote changed the tally (a webhook is
 * due), null when it was a repeat, older than the voter's current vote, or about no poll stored here.
 */
export function applyPollVote(sql: SqlStorage, vote: PollVote): { chat: string } | null {
  const poll = pollRow(sql, vote);
  if (!poll) return null;
  const votes = votesOf(poll);
  const current = votes[vote.voter];
  if (current && (current.voteId === vote.id || current.timestamp > vote.timestamp)) return null;
  votes[vote.voter] = {
    voteId: vote.id,
    voterPhone: vote.voterPhone,
    options: vote.selectedOptions,
    timestamp: vote.timestamp,
  };
  sql.exec("UPDATE messages SET poll_votes = ? WHERE n = ?", JSON.stringify(votes), poll.n);
  return { chat: poll.chat };
}

/** The tally of a stored poll; null for any other message. */
export function pollTally(row: Pick<MessageRow, "poll_votes">, content: Content): PollTally | null {
  if (content.type !== "poll") return null;
  const counted = Object.entries(votesOf(row)).filter(([, vote]) => vote.options.length > 0);
  const options = content.options.map((name) => {
    const voters = counted.filter(([, vote]) => vote.options.includes(name)).map(([voter]) => voter);
    return { name, count: voters.length, voters };
  });
  return { options, totalVoters: counted.length };
}
