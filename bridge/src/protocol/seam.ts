/**
 * The seam between a held session and a WhatsApp connection. Two implementations: `whatsapp.ts` (real
 * Baileys, the only file that imports it) and `simulator.ts` (an in-memory network for tests and demos).
 * Everything here is plain data so the simulator never pulls Baileys in.
 */

import type { AuthState, Me } from "./link.ts";
import type { NetworkEvent } from "./messaging.ts";
import type { Operation, OperationFailureStatus } from "./operations.ts";

/** A JSON value, as the wire protocol carries it (the output type of zod's `z.json()`). */
export type Json = NonNullable<AuthState["creds"]> | null;

/** Why a WhatsApp socket closed, in the terms the reconnect policy needs. */
export interface CloseInfo {
  /** Baileys' `DisconnectReason` status code (515 restart required, 401 logged out, …). */
  code: number;
  reason: string;
  /** The QR codes ran out with nobody scanning (a 408 before the device was ever registered). */
  qrExpired: boolean;
  /** The device was unlinked: the creds are dead. */
  loggedOut: boolean;
  /**
   * WhatsApp could not be reached at all (DNS, refused or timed-out connection, a handshake that never
   * finished): the network's fault, not the QR's or the account's.
   */
  networkError?: boolean;
  /**
   * The server's certificate chain did not lead to WhatsApp's root key (a forged server, an
   * interception): the bridge hung up before saying anything of the account.
   */
  certificateRefused?: boolean;
}

/**
 * A write to the auth state: `creds` replaces the stored creds when present (null clears them); each key
 * (`<type>:<id>`, BufferJSON-serialised) is upserted, or deleted when null. Same shape as the `auth` event.
 */
export interface AuthUpdate {
  creds?: Json;
  keys?: Record<string, Json>;
}

/** Callbacks from one WhatsApp socket. None is called after the owner called `close()`. */
export interface SocketHandlers {
  onQr(qr: string): void;
  onConnecting(): void;
  onOpen(me: Me): void;
  /** The account's own name changed after the open (absent where nothing reports it: the simulator). */
  onMe?(me: Me): void;
  /** The socket is gone for good; the owner decides (reconnect policy) whether to open a new one. */
  onClose(info: CloseInfo): void;
  /** Resolves only once the write is durable at the edge: Baileys must not move on before that. */
  persistAuth(update: AuthUpdate): Promise<void>;
  /** Messages, receipts, edits, deletes, contacts, groups and calls, in the order the network saw them. */
  onNetworkEvent(event: NetworkEvent): void;
  /**
   * The stored record (`raw`) of a message this account sent, from the edge, or null: what a resend
   * request is answered from after a restart. Absent where nothing is stored (tests, the simulator).
   */
  storedMessage?(chat: string, id: string): Promise<Json | null>;
}

/** What a prepared file says about itself, wherever its bytes are. */
export interface MediaMeta {
  mimetype: string;
  fileName?: string;
  /** A video's preview, a small JPEG the message carries (video-thumbnail.ts). */
  thumbnail?: Uint8Array;
  /** A voice note's 64 bars, 0–100 (voice-waveform.ts). */
  waveform?: Uint8Array;
}

/** Media held in memory (images, audio, stickers, profile pictures: at most MEDIA_MEMORY_MAX_BYTES). */
export interface MediaBytes extends MediaMeta {
  bytes: Uint8Array;
}

/**
 * A file spooled to a private temp dir (videos and documents, up to 2 GiB): WhatsApp's side reads it
 * from `path` as a stream. It lives only as long as the operation that fetched it.
 */
export interface SpooledFile {
  path: string;
  size: number;
  /** The first bytes, enough to tell what the content is (mime.ts sniffs magic bytes). */
  head: Uint8Array;
}

export interface MediaFile extends MediaMeta {
  file: SpooledFile;
}

/** Media ready to send (fetched, and for stickers already WebP): in memory or on disk. */
export type PreparedMedia = MediaBytes | MediaFile;

/**
 * Received media as WhatsApp hands it over, decrypted while it streams: read once, by the bridge's
 * upload to the edge (media/edge-upload.ts). Breaking off the iteration stops the source.
 */
export interface MediaDownload {
  mimetype: string;
  fileName?: string;
  chunks: AsyncIterable<Uint8Array>;
}

/** What an operation answered: JSON for the edge, plus the stream of bytes for `media.download`. */
export interface PerformResult {
  data?: Json;
  download?: MediaDownload;
}

/** A refusal with the HTTP-like status the edge passes on (operations.ts). */
export class OperationError extends Error {
  constructor(
    readonly status: OperationFailureStatus,
    message: string,
  ) {
    super(message);
    this.name = "OperationError";
  }
}

export interface WhatsAppSocket {
  /** An 8-character linking code for `digits`; only while the socket waits to be linked. */
  requestPairingCode(digits: string): Promise<string>;
  /** Unlinks the device; the socket then closes with 401 / loggedOut. */
  logout(): Promise<void>;
  /** Closes the connection WITHOUT logging out: the creds stay valid for the next socket. */
  close(): void;
  /**
   * Performs a WhatsApp operation on the open connection. `media` carries the prepared media of the
   * operation's media source (send of image/video/audio/document/sticker, picture.set), else null.
   * Throws OperationError for refusals the caller should see as 4xx.
   */
  perform(operation: Operation, media: PreparedMedia | null): Promise<PerformResult>;
  /** The WhatsApp Web version this socket announces and where it came from (real WhatsApp only). */
  readonly version?: { version: [number, number, number]; source: "pinned" | "fetched" | "edge" | "bundled" };
  /** Present only on simulated sockets: the test's hands on the "phone". */
  simulate?: {
    /** Links the phone to the QR that is showing. */
    scan(): void;
    /** Drops the connection as WhatsApp would with `code`. */
    disconnect(code: number): void;
    /** Everything else a test does to the simulated world (see simulator.ts for the actions). */
    control(args: Record<string, unknown>): Promise<Json>;
  };
}

export interface OpenOptions {
  sessionId: string;
  /** The WhatsApp Web version that last connected this session, as the edge keeps it (welcome). */
  lastGoodVersion?: [number, number, number] | null;
  /** The session's proxy (`socks5://…`, `http://…`) for the WhatsApp socket and media; none: direct. */
  proxy?: string | null;
  /** The auth state to start from (a snapshot: later writes travel through `persistAuth`). */
  auth: AuthState;
  handlers: SocketHandlers;
}

export interface WhatsAppNetwork {
  /** True for the in-memory simulator, so `sim.*` commands can be refused cleanly on real WhatsApp. */
  readonly simulated: boolean;
  open(options: OpenOptions): WhatsAppSocket;
  /**
   * Reads the current WhatsApp Web version again after WhatsApp refused `announced` (405); true when
   * the current one differs from it, so one more try is worthwhile. Absent: the version cannot change
   * (simulator).
   */
  refreshVersion?(announced: [number, number, number] | undefined): Promise<boolean>;
}
