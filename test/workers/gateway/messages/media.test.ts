// Media in R2: uploads streamed in (raw body or multipart), fetched by the bridge, removed once sent;
// received media put up by the bridge in parts and served from R2; signed links; retention; files
// kept in the object's own storage before R2 moved on first read. The fake bridge is the far end of
// the link: it answers the session's commands and moves bytes over the bridge's HTTP endpoints.
import { env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MEDIA_PART_BYTES } from "../../../../bridge/src/protocol/messaging";
import { signMediaLink } from "../../../../workers/media/signed-url";
import { type ConnectedSession, connectedSession } from "../../connected-session";
import { answerSend, BRIDGE_TOKEN, emit, inboundMessage, type Link, sendCommand } from "../../fake-bridge";
import { asKey, BASE, call } from "../../helpers";

const ME = "628111000111@s.whatsapp.net";
const PEER = "628222000222@s.whatsapp.net";
const MIB = 1024 * 1024;

/** Bytes that differ at every offset (a shifted part would not compare equal). */
function fileOf(size: number, seed = 7): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed + (i >> 16)) & 0xff;
  return bytes;
}

async function digest(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function objectsOf(sessionId: string): Promise<R2Object[]> {
  return (await env.MEDIA.list({ prefix: `sessions/${sessionId}/media/` })).objects;
}

const bridgeAuth = (token: string) => ({ Authorization: `Bearer ${token}` });

function bridgeFetch(s: ConnectedSession, path: string, init: RequestInit = {}) {
  return SELF.fetch(`${BASE}/bridge/v1/sessions/${s.id}/media/${path}`, {
    ...init,
    headers: { ...bridgeAuth(s.bridge.token ?? BRIDGE_TOKEN), ...(init.headers ?? {}) },
  });
}

/** Waits for the session's next `wa` command of `op`. */
function waCommand(link: Link, op: string, seen: Set<unknown>) {
  return link
    .next(
      (f) =>
        f.type === "command" && f.name === "wa" && !seen.has(f.id) && (f.args as { op?: string }).op === op,
    )
    .then((frame) => {
      seen.add(frame.id);
      return frame;
    });
}

/** A received document as the bridge reports it. */
async function receiveDocument(s: ConnectedSession, seq: number, id: string, size: number) {
  const content = {
    type: "document",
    media: { mimetype: "application/pdf", size },
    fileName: "contract.pdf",
    mimetype: "application/pdf",
  };
  const raw = { key: { remoteJid: PEER, fromMe: false, id }, message: { documentMessage: {} } };
  await emit(s.link, 1, seq, inboundMessage(PEER, id, content, { raw }));
}

/** What the bridge does for `media.download`: the file up in parts, then the operation's answer. */
async function deliverInParts(s: ConnectedSession, command: Record<string, unknown>, file: Uint8Array) {
  const { ref } = command.args as { ref: string };
  const headers = { "Content-Type": "application/pdf", "X-File-Name": encodeURIComponent("contract.pdf") };
  const opened = await bridgeFetch(s, `${ref}/parts`, { method: "POST", headers });
  expect(opened.status).toBe(200);
  const { uploadId } = (await opened.json()) as { uploadId: string };
  const parts: { partNumber: number; etag: string }[] = [];
  for (let offset = 0, n = 1; offset < file.byteLength; offset += MEDIA_PART_BYTES, n++) {
    const put = await bridgeFetch(s, `${ref}/parts/${n}?uploadId=${encodeURIComponent(uploadId)}`, {
      method: "PUT",
      body: file.slice(offset, offset + MEDIA_PART_BYTES),
    });
    expect(put.status).toBe(200);
    parts.push({ partNumber: n, etag: ((await put.json()) as { etag: string }).etag });
  }
  const done = await bridgeFetch(s, `${ref}/parts/complete?uploadId=${encodeURIComponent(uploadId)}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ parts }),
  });
  expect(done.status).toBe(204);
  s.link.send({
    type: "result",
    epoch: 1,
    id: command.id,
    ok: true,
    data: { mimetype: "application/pdf", size: file.byteLength, fileName: "contract.pdf" },
  });
}

describe("uploading media to send", () => {
  it("a raw 20 MiB document streams into R2, the bridge reads it byte for byte, and it is gone once sent", async () => {
    const s = await connectedSession("Raw upload", ME);
    const file = fileOf(20 * MIB);
    const sending = SELF.fetch(
      `${BASE}/api/messages/${s.slug}/${PEER}/media?type=document&fileName=report.pdf&caption=Q3`,
      {
        method: "POST",
        headers: { ...asKey(s.key), "Content-Type": "application/pdf" },
        body: file,
      },
    );
    const command = await sendCommand(s.link);
    const args = command.args as {
      content: {
        type: string;
        media: { upload: string };
        fileName: string;
        mimetype: string;
        caption: string;
      };
      maxBytes: number;
    };
    expect(args.content).toMatchObject({
      type: "document",
      fileName: "report.pdf",
      mimetype: "application/pdf",
      caption: "Q3",
    });
    expect(args.maxBytes).toBe(2048 * MIB);
    const fetched = await bridgeFetch(s, args.content.media.upload);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get("content-length")).toBe(String(file.byteLength));
    expect(await digest(await fetched.arrayBuffer())).toBe(await digest(file));
    answerSend(s.link, command, ME);
    const sent = await sending;
    expect(sent.status).toBe(200);
    expect(await objectsOf(s.id)).toEqual([]);
  });

  it("multipart with the fields after the file; the kind's limit is checked and a refusal stores nothing", async () => {
    const s = await connectedSession("Form upload", ME);
    const file = fileOf(9 * MIB, 3);
    const form = new FormData();
    form.set("file", new File([file], "clip.mp4", { type: "video/mp4" }));
    form.set("type", "video");
    form.set("caption", "the clip");
    const sending = call("POST", `/api/messages/${s.slug}/${PEER}/media`, {
      rawBody: form,
      headers: asKey(s.key),
    });
    const command = await sendCommand(s.link);
    const content = (
      command.args as { content: { type: string; caption: string; media: { upload: string } } }
    ).content;
    expect(content).toMatchObject({ type: "video", caption: "the clip" });
    expect(await digest(await (await bridgeFetch(s, content.media.upload)).arrayBuffer())).toBe(
      await digest(file),
    );
    answerSend(s.link, command, ME);
    expect((await sending).status).toBe(200);

    // An image above WhatsApp's 16 MiB, sent as a form whose type comes last: stored, checked, removed.
    const big = new FormData();
    big.set("file", new File([fileOf(17 * MIB)], "huge.jpg", { type: "image/jpeg" }));
    big.set("type", "image");
    const refused = await call<{ error: string }>("POST", `/api/messages/${s.slug}/${PEER}/media`, {
      rawBody: big,
      headers: asKey(s.key),
    });
    expect(refused.status).toBe(413);
    expect(refused.body.error).toContain("16 MiB");
    // A raw sticker above 1 MiB is refused while it streams.
    const sticker = await call("POST", `/api/messages/${s.slug}/${PEER}/media?type=sticker`, {
      rawBody: fileOf(MIB + 1),
      headers: { ...asKey(s.key), "Content-Type": "image/webp" },
    });
    expect(sticker.status).toBe(413);
    const json = await call<{ message: string }>("POST", `/api/messages/${s.slug}/${PEER}/media`, {
      body: { file: "x" },
      headers: asKey(s.key),
    });
    expect(json.status).toBe(415);
    const empty = await call("POST", `/api/messages/${s.slug}/${PEER}/media?type=document`, {
      rawBody: new Uint8Array(0),
      headers: { ...asKey(s.key), "Content-Type": "application/pdf" },
    });
    expect(empty.status).toBe(400);
    const malformed = await call("POST", `/api/messages/${s.slug}/${PEER}/media`, {
      rawBody: '--abc\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nunterminated',
      headers: { ...asKey(s.key), "Content-Type": "multipart/form-data; boundary=abc" },
    });
    expect(malformed.status).toBe(400);
    expect(await objectsOf(s.id)).toEqual([]);
    expect(s.link.frames.filter((f) => f.type === "command" && f.name === "wa")).toHaveLength(1);
  });
});

describe("received media", () => {
  it("the bridge puts a 20 MiB file up in parts; it is served from R2 after, by key and by signed link", async () => {
    const s = await connectedSession("Download", ME);
    await receiveDocument(s, 2, "3EB0DOC00000001", 20 * MIB);
    const file = fileOf(20 * MIB, 11);
    const seen = new Set<unknown>();
    const path = `/api/messages/${s.slug}/download/3EB0DOC00000001/media`;
    const downloading = SELF.fetch(`${BASE}${path}`, { headers: asKey(s.key) });
    const command = await waCommand(s.link, "media.download", seen);
    expect((command.args as { maxBytes: number }).maxBytes).toBe(2048 * MIB);
    await deliverInParts(s, command, file);
    const first = await downloading;
    expect(first.status).toBe(200);
    expect(first.headers.get("content-disposition")).toContain("contract.pdf");
    expect(await digest(await first.arrayBuffer())).toBe(await digest(file));

    const again = await SELF.fetch(`${BASE}${path}`, { headers: asKey(s.key) });
    expect(await digest(await again.arrayBuffer())).toBe(await digest(file));
    expect(
      s.link.frames.filter((f) => (f.args as { op?: string } | undefined)?.op === "media.download"),
    ).toHaveLength(1);

    // The event (and so the webhook) carries a signed link that needs no key.
    const events = await call<{ data: { events: { event: string; data: { signedMediaUrl?: string } }[] } }>(
      "GET",
      `/api/sessions/${s.slug}/events?after=0`,
      { headers: asKey(s.key) },
    );
    const received = events.body.data.events.find((e) => e.event === "message.received");
    const link = received?.data.signedMediaUrl ?? "";
    expect(link).toMatch(/^\/api\/media\/.+\?expires=\d+&signature=/);
    const byLink = await SELF.fetch(`${BASE}${link}`);
    expect(byLink.status).toBe(200);
    expect(await digest(await byLink.arrayBuffer())).toBe(await digest(file));

    // Changed in any part, or expired, the link is refused.
    const tampered = link.replace(/signature=./, (m) =>
      m.endsWith("A") ? `${m.slice(0, -1)}B` : `${m.slice(0, -1)}A`,
    );
    expect((await SELF.fetch(`${BASE}${tampered}`)).status).toBe(403);
    const later = link.replace(/expires=(\d+)/, (_, e: string) => `expires=${Number(e) + 3600}`);
    expect((await SELF.fetch(`${BASE}${later}`)).status).toBe(403);
    const old = await signMediaLink(env, s.id, "3EB0DOC00000001", 60, Date.now() - 3600_000);
    const expired = await SELF.fetch(`${BASE}${old?.url}`);
    expect(expired.status).toBe(403);
    expect(((await expired.json()) as { error: string }).error).toContain("expired");

    // A fresh link on request; another owner's session answers 404.
    const made = await call<{ data: { url: string; expiresAt: string } }>(
      "GET",
      `${path}/link?expiresIn=120`,
      {
        headers: asKey(s.key),
      },
    );
    expect(made.status).toBe(200);
    expect(Date.parse(made.body.data.expiresAt) - Date.now()).toBeLessThanOrEqual(121_000);
    expect((await SELF.fetch(`${BASE}${made.body.data.url}`)).status).toBe(200);
    const other = await connectedSession("Someone else's", "628333000333@s.whatsapp.net");
    expect((await call("GET", `${path}/link`, { headers: asKey(other.key) })).status).toBe(404);
    expect(
      (
        await call("GET", `/api/messages/${s.slug}/download/NOSUCHMESSAGE/media/link`, {
          headers: asKey(s.key),
        })
      ).status,
    ).toBe(404);
  });

  it("the parts endpoints refuse an oversize part, a bad completion, and a bridge without the lease", async () => {
    const s = await connectedSession("Parts", ME);
    const ref = "refusedparts01";
    const opened = await bridgeFetch(s, `${ref}/parts`, {
      method: "POST",
      headers: { "Content-Type": "video/mp4" },
    });
    const { uploadId } = (await opened.json()) as { uploadId: string };
    const oversize = await bridgeFetch(s, `${ref}/parts/1?uploadId=${encodeURIComponent(uploadId)}`, {
      method: "PUT",
      body: fileOf(MEDIA_PART_BYTES + 1),
    });
    expect(oversize.status).toBe(413);
    const noId = await bridgeFetch(s, `${ref}/parts/1`, { method: "PUT", body: fileOf(10) });
    expect(noId.status).toBe(400);
    const badPart = await bridgeFetch(s, `${ref}/parts/0?uploadId=x`, { method: "PUT", body: fileOf(10) });
    expect(badPart.status).toBe(400);
    const wrongEtag = await bridgeFetch(s, `${ref}/parts/complete?uploadId=${encodeURIComponent(uploadId)}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ parts: [{ partNumber: 1, etag: "nope" }] }),
    });
    expect(wrongEtag.status).toBe(400);
    expect(await objectsOf(s.id)).toEqual([]);
    const stranger = await SELF.fetch(`${BASE}/bridge/v1/sessions/${s.id}/media/${ref}/parts`, {
      method: "POST",
      headers: bridgeAuth(BRIDGE_TOKEN),
    });
    expect(stranger.status).toBe(409);
  });

  it("retention removes expired files (fetched again on the next download); deleting the session removes all", async () => {
    const s = await connectedSession("Retention", ME);
    const settings = await call("PATCH", `/api/sessions/${s.slug}/settings`, {
      body: { config: { mediaRetentionDays: 2 } },
      headers: asKey(s.key),
    });
    expect(settings.status).toBe(200);
    await receiveDocument(s, 2, "3EB0DOC00000002", 3 * MIB);
    const seen = new Set<unknown>();
    const path = `/api/messages/${s.slug}/download/3EB0DOC00000002/media`;
    const downloading = SELF.fetch(`${BASE}${path}`, { headers: asKey(s.key) });
    await deliverInParts(s, await waCommand(s.link, "media.download", seen), fileOf(3 * MIB));
    expect((await downloading).status).toBe(200);
    expect(await objectsOf(s.id)).toHaveLength(1);

    const stub = env.SESSION.get(env.SESSION.idFromName(s.id));
    // Storing the file armed the session's alarm for the day it expires.
    const armed = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
    expect(armed).not.toBeNull();
    expect(armed ?? 0).toBeGreaterThan(Date.now() + 86_400_000);
    // One day old: kept. Three days old: the sweep removes it.
    await runInDurableObject(stub, (_, state) => {
      state.storage.sql.exec("UPDATE media SET created_at = ?", Date.now() - 86_400_000);
      state.storage.sql.exec("DELETE FROM media_sweep");
      // Due later, so that the test runs it (runDurableObjectAlarm), not the clock, while the test waits.
      return state.storage.setAlarm(Date.now() + 3_600_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await objectsOf(s.id)).toHaveLength(1);
    await runInDurableObject(stub, (_, state) => {
      state.storage.sql.exec("UPDATE media SET created_at = ?", Date.now() - 3 * 86_400_000);
      state.storage.sql.exec("DELETE FROM media_sweep");
      // Due later, so that the test runs it (runDurableObjectAlarm), not the clock, while the test waits.
      return state.storage.setAlarm(Date.now() + 3_600_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await objectsOf(s.id)).toEqual([]);

    const refetching = SELF.fetch(`${BASE}${path}`, { headers: asKey(s.key) });
    await deliverInParts(s, await waCommand(s.link, "media.download", seen), fileOf(3 * MIB, 5));
    expect(await digest(await (await refetching).arrayBuffer())).toBe(await digest(fileOf(3 * MIB, 5)));

    expect((await call("DELETE", `/api/sessions/${s.slug}/settings`, { headers: asKey(s.key) })).status).toBe(
      200,
    );
    expect(await objectsOf(s.id)).toEqual([]);
  });

  it("a file kept in the object's own storage before R2 is still served, and moves to R2 on that read", async () => {
    const s = await connectedSession("Legacy", ME);
    await receiveDocument(s, 2, "3EB0DOC00000003", 1_500_000);
    const legacy = fileOf(1_500_000, 9);
    const stub = env.SESSION.get(env.SESSION.idFromName(s.id));
    await runInDurableObject(stub, (_, state) => {
      const sql = state.storage.sql;
      sql.exec(
        "INSERT INTO media (ref, kind, mimetype, file_name, size, created_at) VALUES ('legacyref0001', 'download', 'application/pdf', 'old.pdf', ?, ?)",
        legacy.byteLength,
        Date.now(),
      );
      sql.exec(
        "INSERT INTO media_parts (ref, part, bytes) VALUES ('legacyref0001', 0, ?)",
        legacy.slice(0, MIB),
      );
      sql.exec(
        "INSERT INTO media_parts (ref, part, bytes) VALUES ('legacyref0001', 1, ?)",
        legacy.slice(MIB),
      );
      sql.exec("UPDATE messages SET media_ref = 'legacyref0001' WHERE id = '3EB0DOC00000003'");
    });
    const served = await SELF.fetch(`${BASE}/api/messages/${s.slug}/download/3EB0DOC00000003/media`, {
      headers: asKey(s.key),
    });
    expect(served.status).toBe(200);
    expect(served.headers.get("content-disposition")).toContain("old.pdf");
    expect(await digest(await served.arrayBuffer())).toBe(await digest(legacy));
    expect((await objectsOf(s.id)).map((o) => o.key)).toEqual([`sessions/${s.id}/media/legacyref0001`]);
    const left = await runInDurableObject(stub, (_, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM media_parts").one(),
    );
    expect(left.n).toBe(0);
    expect(s.link.frames.some((f) => (f.args as { op?: string } | undefined)?.op === "media.download")).toBe(
      false,
    );
  });
});
