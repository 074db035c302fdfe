/**
 * The `wa` and `sim` commands through a real bridge (FleetLink → SessionRunner) against the fake edge:
 * results carry the operation's data or its failure status, media travels over the edge's media
 * endpoint, and network events become session events.
 */
import { createHash } from "node:crypto";
import sharp from "sharp";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import type { NetworkEvent } from "../../../bridge/src/protocol/messaging.ts";
import { type Json, OperationError } from "../../../bridge/src/protocol/seam.ts";
import { captureNetwork, type Perform, startBridge, startSimulatedBridge } from "../support/bridge.ts";
import { type FakeEdge, startFakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";

const ME = "491511234567@s.whatsapp.net";
const PEER = "491700000001@s.whatsapp.net";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function edgeForTest(): Promise<FakeEdge> {
  const edge = await startFakeEdge();
  cleanup.push(() => edge.close());
  return edge;
}

/** A simulated bridge holding `sid`, already linked and connected. */
async function connected(sid: string) {
  const edge = await edgeForTest();
  const bridge = await startSimulatedBridge(edge);
  cleanup.push(() => bridge.fleet.shutdown());
  edge.session(sid).auth = { creds: { registered: true, me: { id: ME, name: "Me" } }, keys: {} };
  await bridge.assign(sid);
  await waitFor(() => edge.session(sid).stored.some((event) => event.kind === "connected"), "connected");
  return { edge, bridge };
}

const stored = <K extends SessionEvent["kind"]>(edge: FakeEdge, sid: string, kind: K) =>
  edge
    .session(sid)
    .stored.filter((event): event is Extract<SessionEvent, { kind: K }> => event.kind === kind);

const send = (messageId: string, content: Record<string, Json>): Record<string, Json> => ({
  op: "send",
  to: PEER,
  messageId,
  content,
});

describe("wa and sim commands", () => {
  it("wa send answers with the WireMessage; a retried id is answered again but delivered once", async () => {
    const { edge } = await connected("ops1");
    const result = await edge.command("ops1", "wa", send("BROADCAST-0001", { type: "text", text: "hello" }));
    expect(result).toMatchObject({
      ok: true,
      data: {
        id: "BROADCAST-0001",
        chat: PEER,
        sender: ME,
        fromMe: true,
        status: "SENT",
        content: { type: "text", text: "hello" },
      },
    });
    expect(result.status).toBeUndefined();
    const retry = await edge.command("ops1", "wa", send("BROADCAST-0001", { type: "text", text: "hello" }));
    expect(retry.data).toEqual(result.data);
    expect(await edge.command("ops1", "sim", { action: "inbox", peer: PEER })).toMatchObject({
      ok: true,
      data: [{ chat: PEER, id: "BROADCAST-0001" }],
    });
    expect(edge.protocolErrors).toEqual([]);
  });

  it("failures carry their status: 400 bad arguments, 404 from the network, 503 while not connected", async () => {
    const { edge } = await connected("ops2");
    expect(await edge.command("ops2", "wa", { op: "send", to: "nobody" })).toMatchObject({
      ok: false,
      status: 400,
      error: expect.stringMatching(/^invalid operation: /),
    });
    expect(
      await edge.command("ops2", "wa", { op: "group.metadata", jid: "120363000000000001@g.us" }),
    ).toMatchObject({
      ok: false,
      status: 404,
      error: "group not found",
    });
    expect(await edge.command("ops2", "sim", { action: "teleport" })).toMatchObject({
      ok: false,
      status: 400,
    });
    await edge.command("ops2", "stop");
    expect(await edge.command("ops2", "wa", { op: "profile.get" })).toMatchObject({
      ok: false,
      status: 503,
      error: "WhatsApp is not connected",
    });
    expect(await edge.command("ops2", "sim", { action: "state" })).toMatchObject({ ok: false, status: 503 });
  });

  it("sends an upload the edge holds (GET with the bearer token) and a sticker made from it", async () => {
    const { edge } = await connected("ops3");
    const png = await sharp({ create: { width: 30, height: 10, channels: 4, background: "green" } })
      .png()
      .toBuffer();
    edge.media.set("ops3/upload_0000001", { bytes: png, mimetype: "image/png", fileName: "green.png" });
    const image = await edge.command(
      "ops3",
      "wa",
      send("IMAGE-000001", { type: "image", media: { upload: "upload_0000001" }, caption: "green" }),
    );
    expect(image).toMatchObject({
      ok: true,
      data: {
        content: {
          type: "image",
          caption: "green",
          media: {
            mimetype: "image/png",
            size: png.length,
            fileName: "green.png",
            sha256: createHash("sha256").update(png).digest("hex"),
          },
        },
      },
    });
    const sticker = await edge.command(
      "ops3",
      "wa",
      send("STICKER-0001", { type: "sticker", media: { upload: "upload_0000001" }, pack: "P", author: "A" }),
    );
    expect(sticker).toMatchObject({
      ok: true,
      data: { content: { type: "sticker", media: { mimetype: "image/webp" } } },
    });
    const missing = await edge.command(
      "ops3",
      "wa",
      send("IMAGE-000002", { type: "image", media: { upload: "missing_0001" } }),
    );
    expect(missing).toMatchObject({ ok: false, status: 400, error: "could not fetch media: 404" });
    expect(edge.mediaRequests).toEqual([
      "GET ops3/upload_0000001 200",
      "GET ops3/upload_0000001 200",
      "GET ops3/missing_0001 404",
    ]);
  });

  it("sim receive becomes a message event at the edge; media.download PUTs its bytes to the edge", async () => {
    const { edge } = await connected("ops4");
    const bytes = Buffer.from("%PDF-1.4 a small pdf");
    const received = await edge.command("ops4", "sim", {
      action: "receive",
      from: PEER,
      content: {
        type: "document",
        base64: bytes.toString("base64"),
        mimetype: "application/pdf",
        fileName: "a.pdf",
      },
      pushName: "Peer",
    });
    expect(received).toMatchObject({ ok: true, data: { id: expect.any(String), delivered: true } });
    const [event] = await waitFor(() => {
      const messages = stored(edge, "ops4", "message");
      return messages.length > 0 && messages;
    }, "message event");
    expect(event?.live).toBe(true);
    const message = event?.message;
    expect(message).toMatchObject({
      chat: PEER,
      sender: PEER,
      fromMe: false,
      pushName: "Peer",
      content: { type: "document" },
    });
    if (!message) throw new Error("no message");

    const { quotedId: _q, pushName: _p, status: _s, ...ref } = message;
    const download = await edge.command("ops4", "wa", {
      op: "media.download",
      message: ref,
      ref: "download_0001",
    });
    expect(download).toMatchObject({
      ok: true,
      data: { mimetype: "application/pdf", size: bytes.length, fileName: "a.pdf" },
    });
    expect(edge.media.get("ops4/download_0001")).toEqual({
      bytes,
      mimetype: "application/pdf",
      fileName: "a.pdf",
    });
    expect(edge.mediaRequests).toEqual(["PUT ops4/download_0001 204"]);
  });

  it("a download larger than one part goes to the edge in 8 MiB parts; one over maxBytes is refused before any fetch", async () => {
    const { edge } = await connected("ops6");
    const seed = Buffer.from("%PDF-1.4 ");
    const size = 2 * 8 * 1024 * 1024 + 7;
    await edge.command("ops6", "sim", {
      action: "receive",
      from: PEER,
      id: "BIG-DOC-0001",
      content: {
        type: "document",
        base64: seed.toString("base64"),
        repeatTo: size,
        mimetype: "application/pdf",
        fileName: "big.pdf",
      },
    });
    const [event] = await waitFor(() => {
      const messages = stored(edge, "ops6", "message");
      return messages.length > 0 && messages;
    }, "message event");
    if (!event) throw new Error("no message");
    const { quotedId: _q, pushName: _p, status: _s, ...ref } = event.message;
    const download = await edge.command("ops6", "wa", {
      op: "media.download",
      message: ref,
      ref: "download_big1",
    });
    expect(download).toMatchObject({
      ok: true,
      data: { mimetype: "application/pdf", size, fileName: "big.pdf" },
    });
    expect(edge.mediaRequests).toEqual([
      "POST ops6/download_big1/parts 200",
      "PUT ops6/download_big1/parts/1 200",
      "PUT ops6/download_big1/parts/2 200",
      "PUT ops6/download_big1/parts/3 200",
      "POST ops6/download_big1/parts/complete 204",
    ]);
    // The seed repeated to the size, as `repeatTo` made it: byte for byte across the part boundaries.
    expect(edge.media.get("ops6/download_big1")?.bytes.equals(Buffer.alloc(size, seed))).toBe(true);

    // The message says how large its file is: over the edge's maxBytes, nothing is fetched or sent.
    const refused = await edge.command("ops6", "wa", {
      op: "media.download",
      message: ref,
      ref: "download_big2",
      maxBytes: 1024 * 1024,
    });
    expect(refused).toMatchObject({ ok: false, status: 400, error: "media larger than 1 MiB" });
    expect(edge.mediaRequests).toHaveLength(5);
  });

  it("on real WhatsApp, sim is refused (400 'simulator only'); wa reaches perform, with refusals mapped", async () => {
    const edge = await edgeForTest();
    let answer: Perform = async () => ({ data: { ok: 1 } });
    const { network, sockets, performed } = captureNetwork(false, (operation, media) =>
      answer(operation, media),
    );
    const bridge = await startBridge(edge, network);
    cleanup.push(() => bridge.fleet.shutdown());
    await bridge.assign("real");
    const socket = await waitFor(() => sockets[0], "socket");
    expect(await edge.command("real", "sim", { action: "state" })).toMatchObject({
      ok: false,
      status: 400,
      error: "simulator only",
    });
    // Not connected yet (no `open`): the operation is not even tried.
    expect(await edge.command("real", "wa", { op: "profile.get" })).toMatchObject({ ok: false, status: 503 });
    socket.handlers.onOpen({ id: ME });
    expect(await edge.command("real", "wa", { op: "profile.get" })).toMatchObject({
      ok: true,
      data: { ok: 1 },
    });
    expect(performed).toEqual([{ operation: { op: "profile.get" }, media: null }]);

    answer = async () => {
      throw new OperationError(403, "not-authorized");
    };
    expect(
      await edge.command("real", "wa", { op: "group.leave", jid: "120363000000000001@g.us" }),
    ).toMatchObject({
      ok: false,
      status: 403,
      error: "not-authorized",
    });
    answer = async () => {
      throw new Error("socket exploded");
    };
    expect(await edge.command("real", "wa", { op: "group.list" })).toMatchObject({
      ok: false,
      status: 500,
      error: "socket exploded",
    });
  });

  it("network events become session events; one outside the protocol is dropped with a warning", async () => {
    const edge = await edgeForTest();
    const { network, sockets } = captureNetwork();
    const bridge = await startBridge(edge, network);
    cleanup.push(() => bridge.fleet.shutdown());
    await bridge.assign("events");
    const socket = await waitFor(() => sockets[0], "socket");
    const good: NetworkEvent = { kind: "message.status", id: "M1", chat: PEER, status: "DELIVERED" };
    const bad = { kind: "message.status", id: "M2", chat: PEER, status: "LOST" } as unknown as NetworkEvent;
    socket.handlers.onNetworkEvent(bad);
    socket.handlers.onNetworkEvent(good);
    socket.handlers.onNetworkEvent({ kind: "call", id: "C1", from: PEER, status: "offer", isVideo: false });
    await waitFor(() => edge.session("events").stored.length === 2, "two events stored");
    expect(edge.session("events").stored).toEqual([
      good,
      { kind: "call", id: "C1", from: PEER, status: "offer", isVideo: false },
    ]);
    expect(
      bridge.logs.find((line) => line.msg === "network event outside the protocol dropped")?.fields,
    ).toMatchObject({
      kind: "message.status",
      path: "status",
    });
    expect(edge.protocolErrors).toEqual([]);
  });
});
