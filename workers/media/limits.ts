import { MEDIA_KIND_LIMITS, MEDIA_MAX_BYTES, type MediaKindName } from "../../bridge/src/protocol/messaging";

const MB = 1024 * 1024;
const KINDS = Object.keys(MEDIA_KIND_LIMITS) as MediaKindName[];

/**
 * The largest file of each kind this deployment moves: WhatsApp's limits (MEDIA_KIND_LIMITS) unless
 * MEDIA_LIMITS_MB says otherwise ("video=100,document=500"; never above MEDIA_MAX_BYTES). A malformed
 * entry is ignored rather than taking the gateway down: the default stays.
 */
export function mediaLimits(configured: string | undefined): Readonly<Record<MediaKindName, number>> {
  const limits = { ...MEDIA_KIND_LIMITS };
  for (const entry of (configured ?? "").split(",")) {
    const [name, value] = entry.split("=").map((part) => part.trim());
    const megabytes = Number(value);
    if (!isKind(name) || !Number.isFinite(megabytes) || megabytes <= 0) continue;
    limits[name] = Math.min(Math.floor(megabytes * MB), MEDIA_MAX_BYTES);
  }
  return limits;
}

export function isKind(name: string | undefined): name is MediaKindName {
  return name !== undefined && (KINDS as string[]).includes(name);
}

/** The kind whose limit applies to a message content type (voice notes are audio). */
export function limitKindOf(contentType: string): MediaKindName | null {
  if (contentType === "voice") return "audio";
  return isKind(contentType) ? contentType : null;
}

/** "2048 MiB", "16 MiB", "512 KiB": how a refusal names a limit. */
export function describeBytes(bytes: number): string {
  return bytes >= MB ? `${Math.round((bytes / MB) * 10) / 10} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

/** The limit for media of a message content type (`limitKindOf`; anything else counts as a document). */
export function limitOf(limits: Readonly<Record<MediaKindName, number>>, contentType: string): number {
  return limits[limitKindOf(contentType) ?? "document"];
}
