// Issue 25 H-c: REGEX auto-replies in real workerd, the SessionDO behind the real API and a fake
// bridge. RE2 is linear in the text but its cost grows with the compiled program: one accepted
// 181-character rule (`\w{1,1000}` repeated) and a 2,048-character message held /api/health for
// 28.5 s. Now a rule compiling past the limit is refused at save (400 naming it), and a message's
// rules share a time budget: past it the rest are skipped and logged, and health answers within 1 s.
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  REGEX_INPUT_LIMIT,
  REGEX_MAX_PROGRAM_SIZE,
} from "../../../../../durable-objects/messaging/bot/regex";
import { AUTO_REPLY_BUDGET_MS } from "../../../../../durable-objects/messaging/bot/rules";
import { type ConnectedSession, connectedSession } from "../../../connected-session";
import { answerSend, emit, inboundMessage, sendCommand } from "../../../fake-bridge";
import { asKey, call } from "../../../helpers";
import { eventually } from "../../../patience";
import { slowestHealthWhile } from "../../../responsiveness";

const ME = "628100000002@s.whatsapp.net";
const PEER = "4915550001111@s.whatsapp.net";
const SKIP_LOG = "auto-reply rules skipped: the message's matching budget is spent";

type Rule = { id: string; keyword: string; matchType: string };
type Reply<T> = { status: number; body: { data: T; error?: string } };

afterEach(() => {
  vi.restoreAllMocks();
});

const rules = (s: ConnectedSession) =>
  call<{ data: Rule[] }>("GET", `/api/autoreplies/${s.slug}`, { headers: asKey(s.key) });

function addRule(s: ConnectedSession, body: Record<string, unknown>): Promise<Reply<Rule>> {
  return call("POST", `/api/autoreplies/${s.slug}`, { body, headers: asKey(s.key) });
}

let seq = 2;
let messages = 0;
/** PEER writes `text` in their direct chat; answers the message id. */
async function fromPeer(s: ConnectedSession, text: string): Promise<string> {
  const id = `BUDGET${String(++messages).padStart(6, "0")}`;
  await emit(s.link, 1, seq++, inboundMessage(PEER, id, { type: "text", text }));
  return id;
}

describe("the compiled-size limit, at save", () => {
  it("refuses the review's patterns with a 400 naming the limit, and accepts real rules", async () => {
    const s = await connectedSession("Regex limit", ME);
    const repeated = (times: number) => `${"\\w{1,1000}".repeat(times)}!`;
    for (const keyword of [repeated(18), repeated(8), "\\w{1,1000}"]) {
      const res = await addRule(s, { keyword, matchType: "REGEX", response: "x" });
      expect(res.status, keyword).toBe(400);
      expect(res.body.error).toMatch(
        new RegExp(
          `at most ${REGEX_MAX_PROGRAM_SIZE} RE2 instructions; this one compiles to (at least )?\\d+`,
        ),
      );
    }
    expect((await rules(s)).body.data).toEqual([]);

    const words =
      "hello|hi|hey|morning|evening|price|cost|order|delivery|shipping|refund|return|cancel|status|track|payment|invoice|help|support|agent|menu|hours|open|address|discount|promo|sale|stock";
    const real = [
      "^inv-\\d{3}$",
      "(?:\\+62|0)8\\d{8,11}",
      "^\\+?\\d{1,3}[- ]?\\(?\\d{3}\\)?[- ]?\\d{3}[- ]?\\d{4}$",
      `\\b(${words})\\b`,
      "[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}",
      "\\d{200}",
    ];
    for (const keyword of real) {
      const res = await addRule(s, { keyword, matchType: "REGEX", response: "ok" });
      expect(res.status, `${keyword}: ${JSON.stringify(res.body)}`).toBe(200);
    }

    // An edit that makes a stored rule too big is refused the same way and changes nothing.
    const plain = await addRule(s, { keyword: "hours", matchType: "CONTAINS", response: "9 to 5" });
    const edit = await call<{ error: string }>("PUT", `/api/autoreplies/${s.slug}/${plain.body.data.id}`, {
      body: { keyword: repeated(18), matchType: "REGEX" },
      headers: asKey(s.key),
    });
    expect(edit.status).toBe(400);
    expect(edit.body.error).toContain(`at most ${REGEX_MAX_PROGRAM_SIZE} RE2 instructions`);
    const stored = (await rules(s)).body.data.find((rule) => rule.id === plain.body.data.id);
    expect(stored).toMatchObject({ keyword: "hours", matchType: "CONTAINS" });
  });
});

describe("the per-message budget", () => {
  it("skips the rules left when it is spent, logs it, and health answers within 1 s", async () => {
    const s = await connectedSession("Regex budget", ME);
    seq = 2;
    // Fifty accepted rules just under the limit, each ~50-100 ms on a long run of word characters
    // (never matching: no "!" follows), then a plain rule the long message would match.
    const expensive = 50;
    for (let i = 0; i < expensive; i++) {
      const res = await addRule(s, { keyword: `\\w{1,${440 + i}}!`, matchType: "REGEX", response: "no" });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const marker = await addRule(s, { keyword: "budget-marker", matchType: "CONTAINS", response: "late" });
    expect(marker.status).toBe(200);

    const warn = vi.spyOn(console, "warn");
    const skipLogged = () => warn.mock.calls.some(([line]) => String(line).includes(SKIP_LOG));
    const long = `${"a".repeat(REGEX_INPUT_LIMIT - 14)} budget-marker`;
    // Probed from before the message is sent: its matching may start before the ack comes back.
    const { slowestMs, result: longId } = await slowestHealthWhile(
      fromPeer(s, long).then(async (id) => {
        await eventually(async () => skipLogged());
        return id;
      }),
    );
    expect(slowestMs).toBeLessThan(1000);
    const logged = warn.mock.calls.map(([line]) => String(line)).find((line) => line.includes(SKIP_LOG));
    const event = JSON.parse(logged ?? "{}") as Record<string, unknown>;
    expect(event).toMatchObject({ message: longId, chat: PEER, budgetMs: AUTO_REPLY_BUDGET_MS });
    expect(event.tried).toBeLessThan(expensive);
    expect(Number(event.tried) + Number(event.skipped)).toBe(expensive + 1);

    // The marker rule was among those skipped: the bot's next send answers the short message that
    // follows (whose rules all run within the budget), not the long one.
    const shortId = await fromPeer(s, "budget-marker?");
    const command = await sendCommand(s.link);
    answerSend(s.link, command, ME);
    expect(command.args).toMatchObject({
      to: PEER,
      content: { type: "text", text: "late" },
      quoted: { id: shortId },
    });
  });
});
