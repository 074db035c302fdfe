import type { OutgoingContent } from "../../../bridge/src/protocol/messaging";

/**
 * Media given by URL (send, auto-replies, scheduled messages): what to call a document and which
 * type it is. WhatsApp shows a document's type from its mimetype, so it is guessed from the name.
 */
const DOCUMENT_TYPES: Readonly<Record<string, string>> = {
  pdf: "application/pdf",
  txt: "text/plain",
  csv: "text/csv",
  json: "application/json",
  zip: "application/zip",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ppt: "application/vnd.ms-powerpoint",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

/** The URL's last path segment, decoded (a malformed escape is kept as written), else `fallback`. */
export function fileNameFromUrl(url: string, fallback = "file"): string {
  let segment = "";
  try {
    segment = new URL(url).pathname.split("/").pop() ?? "";
    return decodeURIComponent(segment).slice(0, 256) || fallback;
  } catch {
    return segment.slice(0, 256) || fallback;
  }
}

export function documentMimetype(fileName: string): string {
  const extension = fileName.includes(".") ? (fileName.split(".").pop()?.toLowerCase() ?? "") : "";
  return DOCUMENT_TYPES[extension] ?? "application/octet-stream";
}

export type UrlMediaKind = "image" | "video" | "audio" | "document";

/** A message carrying the media at `url`, with `caption` where the type has one. */
export function contentFromUrl(
  kind: UrlMediaKind,
  url: string,
  caption: string | null,
  fileName?: string | null,
): OutgoingContent {
  const media = { url };
  const withCaption = caption ? { caption } : {};
  switch (kind) {
    case "image":
    case "video":
      return { type: kind, media, ...withCaption };
    case "audio":
      return { type: "audio", media, ptt: false };
    case "document": {
      const name = fileName ?? fileNameFromUrl(url, "document");
      return { type: "document", media, fileName: name, mimetype: documentMimetype(name), ...withCaption };
    }
  }
}
