/**
 * WhatsApp's media servers, faked: an HTTPS host on 127.0.0.1 that takes encrypted uploads
 * (`POST /mms/<type>/<encSha256>?auth=…`, what Baileys' `getWAUploadToServer` sends) and answers with
 * `url` and `direct_path`, and the `media_conn` reply that points Baileys at it. The certificate is made
 * by the real `openssl` for this run; a client trusts it through `certificate` (Baileys' `fetchAgent`).
 * `decryptMedia` is what a recipient does with a media message: fetch by direct path, check the MAC
 * and hashes, decrypt (AES-256-CBC with keys from the message's `mediaKey`).
 */

import { execFileSync } from "node:child_process";
import { createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BinaryNode, getBinaryNodeChild, getMediaKeys, type MediaType } from "@whiskeysockets/baileys";

/** What a media message carries about its file (image, video, audio, document and sticker alike). */
export interface MediaFields {
  mediaKey?: Uint8Array | null;
  directPath?: string | null;
  fileSha256?: Uint8Array | null;
  fileEncSha256?: Uint8Array | null;
}

function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "fake-wa-media-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest();

export class FakeMediaHost {
  /** Encrypted files as uploaded, by direct path. */
  readonly files = new Map<string, Buffer>();
  /** Upload requests, as `<path> <status>`. */
  readonly uploads: string[] = [];
  /** Download requests, as `<path> <status>`. */
  readonly downloads: string[] = [];
  private readonly auth = randomBytes(16).toString("base64url");

  private constructor(
    private readonly server: Server,
    readonly certificate: Buffer,
  ) {
    server.on("request", (request, response) => {
      const parts: Buffer[] = [];
      request.on("data", (part: Buffer) => parts.push(part));
      request.on("end", () => {
        const url = new URL(request.url ?? "/", this.origin);
        const stored = request.method === "GET" ? this.files.get(url.pathname) : undefined;
        if (request.method === "GET") {
          // A recipient's download (Baileys' downloadContentFromMessage): the encrypted file as stored.
          this.downloads.push(`${url.pathname} ${stored ? 200 : 404}`);
          if (stored) response.writeHead(200, { "content-type": "application/octet-stream" }).end(stored);
          else response.writeHead(404).end();
          return;
        }
        const body = Buffer.concat(parts);
        const status = this.accept(request.method ?? "", url, body);
        this.uploads.push(`${url.pathname} ${status}`);
        if (status !== 200) {
          response.writeHead(status).end();
          return;
        }
        const { mediaUrl, directPath } = this.store(body);
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ url: mediaUrl, direct_path: directPath }));
      });
    });
  }

  static async start(): Promise<FakeMediaHost> {
    const { key, cert } = selfSignedCertificate();
    const server = createServer({ key, cert });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    return new FakeMediaHost(server, cert);
  }

  get hostname(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get origin(): string {
    return `https://${this.hostname}`;
  }

  /** Keeps an encrypted file as an upload would (fake users store theirs directly, without HTTPS). */
  store(encrypted: Buffer): { mediaUrl: string; directPath: string } {
    const directPath = `/v/t62.fake/${randomBytes(12).toString("hex")}.enc`;
    this.files.set(directPath, encrypted);
    return { mediaUrl: `${this.origin}${directPath}`, directPath };
  }

  /** The `media_conn` WhatsApp answers `iq set w:m` with: this host, the upload token, its lifetime. */
  mediaConnReply(request: BinaryNode): BinaryNode | undefined {
    if (request.attrs.xmlns !== "w:m" || !getBinaryNodeChild(request, "media_conn")) return undefined;
    return {
      tag: "iq",
      attrs: { id: request.attrs.id ?? "", type: "result", from: request.attrs.to ?? "s.whatsapp.net" },
      content: [
        {
          tag: "media_conn",
          attrs: { auth: this.auth, ttl: "3600", auth_ttl: "3600", max_buckets: "1" },
          content: [{ tag: "host", attrs: { hostname: this.hostname, maxContentLengthBytes: "104857600" } }],
        },
      ],
    };
  }

  /**
   * A recipient's download: the file by its direct path, MAC-checked and decrypted; also checks that it
   * is the file the message names (`fileEncSha256`, `fileSha256`).
   */
  async decryptMedia(media: MediaFields, type: MediaType): Promise<Buffer> {
    const encrypted = media.directPath ? this.files.get(media.directPath) : undefined;
    if (!encrypted || !media.mediaKey) throw new Error(`no file at ${media.directPath}`);
    if (media.fileEncSha256 && !sha256(encrypted).equals(Buffer.from(media.fileEncSha256))) {
      throw new Error("the stored file is not the one the message names (fileEncSha256)");
    }
    const { iv, cipherKey, macKey } = await getMediaKeys(media.mediaKey, type);
    if (!macKey) throw new Error("no MAC key derived");
    const body = encrypted.subarray(0, -10);
    const mac = createHmac("sha256", macKey).update(iv).update(body).digest().subarray(0, 10);
    if (!mac.equals(encrypted.subarray(-10))) throw new Error("media MAC mismatch");
    const decipher = createDecipheriv("aes-256-cbc", cipherKey, iv);
    const plain = Buffer.concat([decipher.update(body), decipher.final()]);
    if (media.fileSha256 && !sha256(plain).equals(Buffer.from(media.fileSha256))) {
      throw new Error("decrypted bytes do not match fileSha256");
    }
    return plain;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Uploads need the token handed out in `media_conn` and a path Baileys uses; nothing else is served. */
  private accept(method: string, url: URL, body: Buffer): number {
    if (method !== "POST" || !url.pathname.startsWith("/mms/")) return 404;
    if (url.searchParams.get("auth") !== this.auth) return 401;
    // The last path segment is the encrypted file's SHA-256 (URL-safe base64): the upload must match it.
    return sha256(body).toString("base64url") === url.pathname.split("/").at(-1) ? 200 : 400;
  }
}
