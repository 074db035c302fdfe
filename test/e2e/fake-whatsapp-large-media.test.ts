// Media at WhatsApp's size through the whole stack: `npm start` (workerd, local R2) with the real bridge
// on Baileys against the protocol-level fake WhatsApp (its media host keeps files on disk). A 200 MB
// document and a 60 MB video uploaded through the API stream into R2, out to the bridge, are encrypted
// and uploaded from disk, and the contact decrypts them byte for byte; a contact's 200 MB document and
// 60 MB video arrive as webhooks whose signed links (and the API's download route) serve them byte for
// byte. The bridge's resident memory, sampled from /proc throughout, stays far below the file's size.
// It is measured after one 20 MB transfer each way: the first large transfer in a fresh process grows
// its heap once (Node keeps memory it then reuses: 50-110 MiB here, for 200 MB and 600 MB alike). The
// Worker's memory is its own isolate's, read through workerd's inspector (test/support/isolate-memory.ts)
// and asserted with a bound that does not grow with the file. workerd's RSS is logged, not asserted:
// locally it also runs Miniflare's R2 simulator, whose isolate grows with the file (logged beside it),
// which is not the Worker's and not what R2 does.
import { createHash } from "node:crypto";
import { request } from "node:http";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MEDIA_PART_BYTES } from "../../bridge/src/protocol/messaging.ts";
import { generatedDigest, generatedStream, MIB } from "../bridge/support/large-media.ts";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import type { FakeWhatsApp, LinkedDevice } from "../fake-whatsapp/server.ts";
import { eventually } from "../support/api.ts";
import {
  type FakeWhatsAppStack,
  pairByQr,
  startFakeWhatsAppStack,
  webhookData,
} from "../support/fake-whatsapp-stack.ts";
import {
  type IsolateGrowth,
  IsolateInspector,
  R2_SIMULATOR_ISOLATE,
  WORKER_ISOLATE,
  watchIsolates,
} from "../support/isolate-memory.ts";
import { jidPath } from "../support/messaging.ts";
import { processUnder, watchMemory } from "../support/process-memory.ts";
import { createWebhook } from "../support/receiver.ts";
import { findFreePort } from "../support/stack.ts";
import { testVideo } from "../support/video.ts";

const SID = `bigmedia-${Math.random().toString(36).slice(2, 8)}`;
const DOCUMENT_BYTES = 200 * 1000 * 1000;
const VIDEO_BYTES = 60 * 1000 * 1000;
/**
 * What the Worker's isolate may hold during any transfer, whatever the file's size: the two part
 * buffers of an upload without Content-Length (2 × MEDIA_PART_BYTES) and the garbage its chunks leave
 * until V8 next collects (up to 18 MiB for a 200 MB upload in parts, bench/workerd-memory.mjs). Under
 * 1/4 of the 200 MB file; that file read whole by the Worker grew its isolate by 191 MiB.
 */
const WORKER_HOLDS_AT_MOST = 2 * MEDIA_PART_BYTES + 24 * MIB;

let world: FakeWhatsAppStack;
let whatsapp: FakeWhatsApp;
let device: LinkedDevice;
let contact: FakeContact;
let pids: { workerd: number; bridge: number };
let videoHead: Buffer;
let isolates: { worker: IsolateInspector; r2: IsolateInspector };

beforeAll(async () => {
  // workerd's inspector, where the Worker's own isolate is measured apart from the rest of workerd.
  const inspectorPort = await findFreePort();
  world = await startFakeWhatsAppStack({ INSPECTOR_PORT: String(inspectorPort) });
  whatsapp = world.whatsapp;
  expect((await world.api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
  await createWebhook(world.api, SID, {
    name: "received",
    url: world.receiver.url(`/${SID}`),
    events: ["message.received"],
  });
  device = await pairByQr(world.api, whatsapp, SID, "4915550007001");
  contact = new FakeContact(whatsapp, "4915550007002", "Lena");
  // A first text, so that both sides have a Signal session before the files.
  const hello = await contact.sendText(device, "files coming");
  await received(hello.id);
  pids = {
    workerd: processUnder(world.stack.pid, /workerd/),
    bridge: processUnder(world.stack.pid, /bridge\/src\/main\.ts/),
  };
  isolates = {
    worker: await IsolateInspector.connect(inspectorPort, WORKER_ISOLATE),
    r2: await IsolateInspector.connect(inspectorPort, R2_SIMULATOR_ISOLATE),
  };
  videoHead = await testVideo();
  await warmUp();
}, 240_000);

/** One 20 MB file each way, so that the measured transfers are not the processes' first. */
async function warmUp(): Promise<void> {
  const size = 20 * 1000 * 1000;
  const path = `/api/messages/${SID}/${jidPath(contact.jid)}/media?type=document`;
  const sent = await uploadRaw(path, size, "application/pdf");
  expect(sent.status, sent.body).toBe(200);
  const incoming = await contact.sendLargeFile(device, "document", generatedStream(size), {
    mimetype: "application/pdf",
    fileName: "warm-up.pdf",
  });
  const data = await received(incoming.id);
  const download = await downloadDigest(`${world.stack.baseUrl}${data.mediaUrl}`, {
    "X-API-Key": world.api.key,
  });
  expect(download).toEqual({ status: 200, ...generatedDigest(size) });
}

afterAll(async () => {
  isolates?.worker.close();
  isolates?.r2.close();
  await world?.stop();
});

type ReceivedData = { id: string; signedMediaUrl?: string; mediaUrl?: string | null };

function received(id: string): Promise<ReceivedData> {
  return eventually(
    async () =>
      (await webhookData(world.receiver, SID, "message.received")).find(
        (data) => (data as ReceivedData).id === id,
      ) as ReceivedData | undefined,
    60_000,
    `the message.received webhook of ${id}`,
  );
}

/**
 * POSTs a generated file as the raw body, streamed as a client uploading from disk would: with its
 * Content-Length (as curl --data-binary does), or chunked (a client that does not know the size).
 */
function uploadRaw(
  path: string,
  size: number,
  contentType: string,
  { head, chunked = false }: { head?: Buffer; chunked?: boolean } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const length = chunked ? {} : { "Content-Length": String(size) };
    const req = request(`${world.stack.baseUrl}${path}`, {
      method: "POST",
      headers: { "X-API-Key": world.api.key, "Content-Type": contentType, ...length },
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    pipeline(generatedStream(size, head ? { head } : {}), req).catch(reject);
  });
}

/** Downloads `url`, hashing as it streams; answers the status, size and SHA-256. */
async function downloadDigest(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  const hash = createHash("sha256");
  let size = 0;
  if (response.body)
    for await (const chunk of response.body) {
      hash.update(chunk);
      size += chunk.byteLength;
    }
  return { status: response.status, size, sha256: hash.digest("hex") };
}

/**
 * Uploads a generated file through the API (measured from the first byte to the answer) and waits for
 * the message to reach the contact's phone: the growth meanwhile and the message as the phone got it.
 */
async function sendToContact(
  path: string,
  size: number,
  contentType: string,
  options: { head?: Buffer; chunked?: boolean } = {},
) {
  const memory = await measure();
  const sent = await uploadRaw(path, size, contentType, options);
  const growth = await memory.stop();
  expect(sent.status, sent.body).toBe(200);
  const id = (JSON.parse(sent.body) as { data: { id: string } }).data.id;
  const arrived = await eventually(
    async () => contact.inbox.find((message) => message.id === id),
    60_000,
    `${id} at the contact's`,
  );
  const media = whatsapp.messaging.media;
  if (!media) throw new Error("the fake WhatsApp has no media host");
  return { growth, message: arrived.message, media };
}

interface Growth {
  rss: Record<string, number>;
  isolates: Record<"worker" | "r2", IsolateGrowth>;
}

/** The processes' resident memory and the isolates' heaps, sampled from now until `stop()`. */
async function measure(): Promise<{ stop(): Promise<Growth> }> {
  const wake = async () => (await fetch(`${world.stack.baseUrl}/api/health`)).arrayBuffer();
  // Only the Worker's isolate is collected first: nothing the test can send wakes the R2 simulator's.
  const heaps = await watchIsolates(isolates, { collect: ["worker"], wake });
  const rss = watchMemory(pids);
  return {
    async stop() {
      return { rss: rss.stop(), isolates: await heaps.stop() };
    },
  };
}

function expectFarBelow({ rss, isolates: heaps }: Growth, size: number, what: string): void {
  const mib = (bytes = 0) => (bytes / MIB).toFixed(1);
  const isolate = ({ held, heap, backing, samples }: IsolateGrowth) =>
    `${mib(held)} MiB (heap ${mib(heap)}, ArrayBuffers ${mib(backing)}; ${samples} samples)`;
  console.info(
    `${what}: the bridge grew at most ${mib(rss.bridge)} MiB; the Worker's isolate ${isolate(heaps.worker)}; ` +
      `workerd's RSS ${mib(rss.workerd)} MiB, of which Miniflare's R2 simulator's isolate ${isolate(heaps.r2)}`,
  );
  expect(rss.bridge ?? Number.POSITIVE_INFINITY).toBeLessThan(size / 2);
  expect(heaps.worker.held).toBeLessThan(WORKER_HOLDS_AT_MOST);
}

describe("media at WhatsApp's size, end to end", () => {
  it("a 200 MB document uploaded through the API reaches the contact byte for byte", async () => {
    const { growth, message, media } = await sendToContact(
      `/api/messages/${SID}/${jidPath(contact.jid)}/media?type=document&fileName=archive.zip&caption=all%20of%20it`,
      DOCUMENT_BYTES,
      "application/zip",
    );
    const document = message.documentMessage;
    if (!document) throw new Error("no document message");
    expect(document).toMatchObject({
      fileName: "archive.zip",
      mimetype: "application/zip",
      caption: "all of it",
    });
    expect(await media.decryptedDigest(document, "document")).toEqual(generatedDigest(DOCUMENT_BYTES));
    expectFarBelow(growth, DOCUMENT_BYTES, "200 MB document sent");
  }, 300_000);

  it("a 60 MB video uploaded chunked (no Content-Length) reaches the contact byte for byte, with a preview", async () => {
    const { growth, message, media } = await sendToContact(
      `/api/messages/${SID}/${jidPath(contact.jid)}/media?type=video&caption=the%20match`,
      VIDEO_BYTES,
      "video/mp4",
      { head: videoHead, chunked: true },
    );
    const video = message.videoMessage;
    if (!video) throw new Error("no video message");
    expect(video).toMatchObject({ caption: "the match", mimetype: "video/mp4" });
    expect(video.jpegThumbnail?.length ?? 0).toBeGreaterThan(0);
    expect(await media.decryptedDigest(video, "video")).toEqual(
      generatedDigest(VIDEO_BYTES, { head: videoHead }),
    );
    expectFarBelow(growth, VIDEO_BYTES, "60 MB video sent");
  }, 300_000);

  it("a contact's 200 MB document: its webhook's signed link serves it byte for byte; a changed link is refused", async () => {
    const sent = await contact.sendLargeFile(device, "document", generatedStream(DOCUMENT_BYTES), {
      mimetype: "application/pdf",
      fileName: "scan.pdf",
    });
    const data = await received(sent.id);
    expect(data.signedMediaUrl).toMatch(/^\/api\/media\/.+\?expires=\d+&signature=/);
    // The first download has the bridge fetch it from WhatsApp and hand it to the Worker part by part
    // (R2 multipart), while the Worker serves it from R2: both directions through the Worker at once.
    const memory = await measure();
    const download = await downloadDigest(`${world.stack.baseUrl}${data.signedMediaUrl}`);
    const growth = await memory.stop();
    expect(download).toEqual({ status: 200, ...generatedDigest(DOCUMENT_BYTES) });
    expectFarBelow(growth, DOCUMENT_BYTES, "200 MB document received");
    const changed = (data.signedMediaUrl ?? "").replace(
      /expires=(\d+)/,
      (_, e: string) => `expires=${Number(e) + 1}`,
    );
    expect((await fetch(`${world.stack.baseUrl}${changed}`)).status).toBe(403);
  }, 300_000);

  it("a contact's 60 MB video downloads through the API byte for byte", async () => {
    const sent = await contact.sendLargeFile(
      device,
      "video",
      generatedStream(VIDEO_BYTES, { head: videoHead }),
      {
        mimetype: "video/mp4",
        caption: "from Lena",
      },
    );
    const data = await received(sent.id);
    const memory = await measure();
    const download = await downloadDigest(`${world.stack.baseUrl}${data.mediaUrl}`, {
      "X-API-Key": world.api.key,
    });
    const growth = await memory.stop();
    expect(download).toEqual({ status: 200, ...generatedDigest(VIDEO_BYTES, { head: videoHead }) });
    expectFarBelow(growth, VIDEO_BYTES, "60 MB video received");
  }, 300_000);
});
