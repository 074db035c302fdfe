/**
 * History sync beyond the first chunk, as real phones send it: the `HistorySync` is zlib-deflated,
 * encrypted like any media file (AES-256-CBC and a 10-byte HMAC-SHA256, keys from a random `mediaKey`
 * expanded with HKDF info "WhatsApp History Keys": Baileys' media type `md-msg-hist`) and put on the
 * media host; the notification carries only where it is and how to check it (`directPath`, `mediaKey`,
 * `fileEncSha256`, `fileSha256`, `fileLength`). Baileys fetches it by direct path
 * (`Utils/history.js` `downloadHistory`) from its default media host, `mmg.whatsapp.net`.
 */
import { createCipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import { deflateSync } from "node:zlib";
import { getMediaKeys, proto } from "@whiskeysockets/baileys";
import type { FakeMediaHost } from "./media.ts";

export type HistoryBlobFields = Pick<
  proto.Message.IHistorySyncNotification,
  "directPath" | "mediaKey" | "fileEncSha256" | "fileSha256" | "fileLength"
>;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest();

/**
 * Encrypts `sync` as the phone uploads it and stores it on `media`; `tamper` flips a byte of the stored
 * file afterwards (what a corrupted download looks like: its hashes and MAC no longer match).
 */
export async function uploadHistory(
  media: FakeMediaHost,
  sync: proto.IHistorySync,
  { tamper = false }: { tamper?: boolean } = {},
): Promise<HistoryBlobFields> {
  const plain = deflateSync(proto.HistorySync.encode(sync).finish());
  const mediaKey = randomBytes(32);
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, "md-msg-hist");
  if (!macKey) throw new Error("no MAC key derived");
  const cipher = createCipheriv("aes-256-cbc", cipherKey, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  const mac = createHmac("sha256", macKey).update(iv).update(body).digest().subarray(0, 10);
  const encrypted = Buffer.concat([body, mac]);
  const fields: HistoryBlobFields = {
    mediaKey,
    fileEncSha256: sha256(encrypted),
    fileSha256: sha256(plain),
    fileLength: plain.length,
  };
  const stored = Buffer.from(encrypted);
  const at = Math.floor(stored.length / 3);
  if (tamper) stored.writeUInt8(stored.readUInt8(at) ^ 0xff, at);
  const { directPath } = media.store(stored);
  return { ...fields, directPath };
}
