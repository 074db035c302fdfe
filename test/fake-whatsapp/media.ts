/**
 * WhatsApp's media servers, faked: an HTTPS host on 127.0.0.1 that takes encrypted uploads
 * (`POST /mms/<type>/<encSha256>?auth=…`, what Baileys' `getWAUploadToServer` sends) and answers with
 * `url` and `direct_path`, and the `media_conn` reply that points Baileys at it. The certificate is made
 * by the real `openssl` for this run; a client trusts it through `certificate` (Baileys' `fetchAgent`).
 * `decryptMedia` is what a recipient does with a media message: fetch by direct path, check the MAC
 * and hashes, decrypt (AES-256-CBC with keys from the message's `mediaKey`).
 *
 * Files are kept on disk (a private dir, removed on `close`) and move through the host as streams, so
 * it takes and serves WhatsApp's full sizes (up to 2 GiB, as its `media_conn` says) without holding
 * them: a test's memory measurements see the bridge, not this host.
 */

import { execFileSync } from "node:child_process";
import { createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import {
  createReadStream,
  createWriteStream,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { copyFile, open, rename, rm, stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
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

/** WhatsApp's own upload limit, as its `media_conn` announces it: 2 GiB. */
const MAX_CONTENT_LENGTH_BYTES = 2 * 1024 * 1024 * 1024;

/** A decrypted file as a hash, for files too large to compare as buffers. */
export interface MediaDigest {
  size: number;
  sha256: string;
}

export class FakeMediaHost {
  /** Encrypted files as uploaded, by direct path: where each is on disk. */
  private readonly files = new Map<string, string>();
  /** Upload requests, as `<path> <status>`. */
  readonly uploads: string[] = [];
  /** Download requests, as `<path> <status>`. */
  readonly downloads: string[] = [];
  private readonly auth = randomBytes(16).toString("base64url");
  private readonly dir = mkdtempSync(join(tmpdir(), "fake-wa-files-"));

  private constructor(
    private readonly server: Server,
    readonly certificate: Buffer,
  ) {
    server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      const url = new URL(request.url ?? "/", this.origin);
      const done =
        request.method === "GET" ? this.serve(url, response) : this.receive(request, url, response);
      done.catch(() => response.destroy());
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
    const { directPath, path } = this.newFile();
    writeFileSync(path, encrypted);
    return this.keep(directPath, path);
  }

  /**
   * Keeps an encrypted file already on disk (Baileys' `encFilePath`, which it removes afterwards): moved
   * when it can be, copied across devices, never read into memory.
   */
  async storeFile(encryptedPath: string): Promise<{ mediaUrl: string; directPath: string }> {
    const { directPath, path } = this.newFile();
    await rename(encryptedPath, path).catch(() => copyFile(encryptedPath, path));
    return this.keep(directPath, path);
  }

  /** The `media_conn` WhatsApp answers `iq set w:m` with: this host, the upload token, its lifetime. */
  mediaConnReply(request: BinaryNode): BinaryNode | undefined {
    if (request.attrs.xmlns !== "w:m" || !getBinaryNodeChild(request, "media_conn")) return undefined;
    const maxContentLengthBytes = String(MAX_CONTENT_LENGTH_BYTES);
    return {
      tag: "iq",
      attrs: { id: request.attrs.id ?? "", type: "result", from: request.attrs.to ?? "s.whatsapp.net" },
      content: [
        {
          tag: "media_conn",
          attrs: { auth: this.auth, ttl: "3600", auth_ttl: "3600", max_buckets: "1" },
          content: [{ tag: "host", attrs: { hostname: this.hostname, maxContentLengthBytes } }],
        },
      ],
    };
  }

  /**
   * A recipient's download: the file by its direct path, MAC-checked and decrypted; also checks that it
   * is the file the message names (`fileEncSha256`, `fileSha256`).
   */
  async decryptMedia(media: MediaFields, type: MediaType): Promise<Buffer> {
    const parts: Buffer[] = [];
    await this.decryptInto(media, type, (part) => void parts.push(part));
    return Buffer.concat(parts);
  }

  /** The same checks for a large file, whose plaintext is hashed as it decrypts instead of kept. */
  async decryptedDigest(media: MediaFields, type: MediaType): Promise<MediaDigest> {
    const hash = createHash("sha256");
    let size = 0;
    await this.decryptInto(media, type, (part) => {
      hash.update(part);
      size += part.length;
    });
    return { size, sha256: hash.digest("hex") };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.dir, { recursive: true, force: true });
  }

  private newFile(): { directPath: string; path: string } {
    const name = `${randomBytes(12).toString("hex")}.enc`;
    return { directPath: `/v/t62.fake/${name}`, path: join(this.dir, name) };
  }

  private keep(directPath: string, path: string): { mediaUrl: string; directPath: string } {
    this.files.set(directPath, path);
    return { mediaUrl: `${this.origin}${directPath}`, directPath };
  }

  /** A recipient's download (Baileys' downloadContentFromMessage): the encrypted file as stored. */
  private async serve(url: URL, response: ServerResponse): Promise<void> {
    const path = this.files.get(url.pathname);
    this.downloads.push(`${url.pathname} ${path ? 200 : 404}`);
    if (!path) return void response.writeHead(404).end();
    const { size } = await stat(path);
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(size) });
    await pipeline(createReadStream(path), response);
  }

  /** An upload, written to disk as it arrives and hashed on the way; kept only when it checks out. */
  private async receive(request: IncomingMessage, url: URL, response: ServerResponse): Promise<void> {
    const refused = this.refusal(request.method ?? "", url);
    const { directPath, path } = this.newFile();
    const hash = createHash("sha256");
    request.on("data", (part: Buffer) => hash.update(part));
    await pipeline(request, createWriteStream(path));
    // The last path segment is the encrypted file's SHA-256 (URL-safe base64): the upload must match it.
    const status = refused ?? (hash.digest("base64url") === url.pathname.split("/").at(-1) ? 200 : 400);
    this.uploads.push(`${url.pathname} ${status}`);
    if (status !== 200) {
      await rm(path, { force: true });
      return void response.writeHead(status).end();
    }
    const { mediaUrl } = this.keep(directPath, path);
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ url: mediaUrl, direct_path: directPath }));
  }

  /** Uploads need the token handed out in `media_conn` and a path Baileys uses; nothing else is served. */
  private refusal(method: string, url: URL): number | undefined {
    if (method !== "POST" || !url.pathname.startsWith("/mms/")) return 404;
    if (url.searchParams.get("auth") !== this.auth) return 401;
    return undefined;
  }

  /**
   * Streams the stored file through the MAC and the cipher: the last 10 bytes are the MAC, everything
   * before it the ciphertext. Hashes of the encrypted and the plain file are checked as they stream.
   */
  private async decryptInto(
    media: MediaFields,
    type: MediaType,
    sink: (part: Buffer) => void,
  ): Promise<void> {
    const path = media.directPath ? this.files.get(media.directPath) : undefined;
    if (!path || !media.mediaKey) throw new Error(`no file at ${media.directPath}`);
    const { size } = await stat(path);
    const { iv, cipherKey, macKey } = await getMediaKeys(media.mediaKey, type);
    if (!macKey) throw new Error("no MAC key derived");
    const stored = await this.lastBytes(path, size, 10);
    const hmac = createHmac("sha256", macKey).update(iv);
    const encHash = createHash("sha256");
    const plainHash = createHash("sha256");
    const decipher = createDecipheriv("aes-256-cbc", cipherKey, iv);
    const emit = (part: Buffer) => {
      plainHash.update(part);
      if (part.length) sink(part);
    };
    for await (const chunk of createReadStream(path, { end: size - 11 })) {
      hmac.update(chunk as Buffer);
      encHash.update(chunk as Buffer);
      emit(decipher.update(chunk as Buffer));
    }
    encHash.update(stored);
    if (media.fileEncSha256 && !encHash.digest().equals(Buffer.from(media.fileEncSha256))) {
      throw new Error("the stored file is not the one the message names (fileEncSha256)");
    }
    if (!hmac.digest().subarray(0, 10).equals(stored)) throw new Error("media MAC mismatch");
    emit(decipher.final());
    if (media.fileSha256 && !plainHash.digest().equals(Buffer.from(media.fileSha256))) {
      throw new Error("decrypted bytes do not match fileSha256");
    }
  }

  private async lastBytes(path: string, size: number, count: number): Promise<Buffer> {
    const handle = await open(path, "r");
    try {
      const bytes = Buffer.alloc(count);
      await handle.read(bytes, 0, count, size - count);
      return bytes;
    } finally {
      await handle.close();
    }
  }
}
