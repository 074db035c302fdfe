/**
 * The edge's side of the shared SSRF table (test/support/address-cases.ts), through the API a user
 * calls: a webhook target and a media URL in every private form of the table are refused with a 400
 * naming the host, before anything is stored or asked of the bridge; public ones go through. The
 * bridge's suite (test/bridge/media/public-fetch.test.ts) holds the same table to the same verdicts.
 */
import { describe, expect, it } from "vitest";
import { ADDRESS_CASES, INTERNAL_NAMES, urlOf } from "../../support/address-cases";
import { type ConnectedSession, connectedSession } from "../connected-session";
import type { Link } from "../fake-bridge";
import { type Envelope, ownerWithSession } from "../gateway/webhooks/helpers";
import { asKey, call } from "../helpers";

/** What vitest.workers.config.ts lists in WEBHOOK_ALLOWED_HOSTS: exempt here, so left out of the cases. */
const LISTED = ["127.0.0.1", "localhost"];
const normalised = (host: string) =>
  host
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();

/** The table's addresses as URL hosts (zone ids cannot be carried by a URL), as the parser prints them. */
const asUrls = (wanted: boolean) =>
  ADDRESS_CASES.filter((entry) => entry.private === wanted).flatMap((entry) => {
    const url = urlOf(entry.address);
    const host = url === null ? "" : normalised(new URL(url).hostname);
    return url === null || LISTED.includes(host) ? [] : [{ ...entry, url, host }];
  });
const internalNames = INTERNAL_NAMES.filter((name) => !LISTED.includes(normalised(name)));

let owner: ReturnType<typeof ownerWithSession> | undefined;
/** One owner and session for the table (refused targets store nothing, so they never fill it up). */
const sharedOwner = () => {
  owner ??= ownerWithSession();
  return owner;
};

async function createTarget(key: string, sessionId: string, url: string) {
  return call<Envelope<{ id: string }>>("POST", `/api/webhooks/${sessionId}`, {
    body: { name: "target", url, events: ["message.received"] },
    headers: asKey(key),
  });
}

describe("webhook targets: the shared address table, through the API", () => {
  it.each(asUrls(true))("refuses $url ($why) with 400 naming the address", async ({ url, host }) => {
    const { alice, session } = await sharedOwner();
    const res = await createTarget(alice.key, session.sessionId, url);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toBe(`url: ${host} is a private address`);
  });

  it("accepts every public address of the table", async () => {
    const { alice, session } = await ownerWithSession();
    for (const { url } of asUrls(false)) {
      const res = await createTarget(alice.key, session.sessionId, url);
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200);
    }
  });

  it("refuses names only a local network can answer for, unless WEBHOOK_ALLOWED_HOSTS lists them", async () => {
    const { alice, session } = await ownerWithSession();
    for (const name of internalNames) {
      const res = await createTarget(alice.key, session.sessionId, `http://${name}/hook`);
      expect(res.status, name).toBe(400);
      expect(res.body.error).toBe(`url: ${normalised(name)} is not a public host name`);
    }
    // The workerd tests allow 127.0.0.1 and localhost; another spelling of loopback stays refused.
    expect((await createTarget(alice.key, session.sessionId, "http://localhost./hook")).status).toBe(200);
    const mapped = await createTarget(alice.key, session.sessionId, "http://[::ffff:127.0.0.1]/hook");
    expect(mapped.body.error).toBe("url: ::ffff:7f00:1 is a private address");
  });
});

const ME = "628111000111@s.whatsapp.net";
const TO = "628122222222@s.whatsapp.net";

const sends = (link: Link) =>
  link.frames.filter((f) => f.type === "command" && (f.args as { op?: string } | undefined)?.op === "send");

function sendImage(s: ConnectedSession, url: string) {
  return call<Envelope<null>>("POST", `/api/messages/${s.slug}/${TO}/send`, {
    body: { message: { image: { url } } },
    headers: asKey(s.key),
  });
}

describe("media by URL: the edge refuses what it can see before asking the bridge", () => {
  it("refuses private and internal media hosts with 400, and the bridge is never asked", async () => {
    const s = await connectedSession("Media", ME);
    const refused = [
      ...asUrls(true).map(({ url, host }) => ({ url: `${url}cat.png`, why: `${host} is a private address` })),
      ...internalNames.map((name) => ({
        url: `https://${name}/cat.png`,
        why: `${normalised(name)} is not a public host name`,
      })),
    ];
    for (const { url, why } of refused) {
      const res = await sendImage(s, url);
      expect(res.status, url).toBe(400);
      expect(res.body.error).toBe(`media url: ${why}`);
    }
    expect(sends(s.link)).toEqual([]);
  });

  it("passes public media URLs (and WEBHOOK_ALLOWED_HOSTS) on to the bridge, which fetches them", async () => {
    const s = await connectedSession("Media", ME);
    for (const url of [
      "https://cdn.example.com/cat.png",
      "http://[2606:4700::1111]/cat.png",
      "http://127.0.0.1/x",
    ]) {
      const sent = sendImage(s, url);
      const frame = await s.link.next(
        (f) =>
          f.type === "command" &&
          (f.args as { content?: { media?: { url?: string } } }).content?.media?.url === url,
      );
      // The bridge's own check (with DNS) has the last word; here it refuses, as it would a private answer.
      s.link.send({
        type: "result",
        epoch: 1,
        id: frame.id,
        ok: false,
        status: 400,
        error: "refused by the bridge",
      });
      const res = await sent;
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("refused by the bridge");
    }
  });
});
