/**
 * The fake edge's multipart endpoint (mediaPartsPath in bridge/src/protocol/messaging.ts), R2's
 * multipart in memory: `POST` opens (`{"uploadId"}`), `PUT /{n}?uploadId=` keeps part n (`{"etag"}`),
 * `POST /complete?uploadId=` joins the listed parts into the media store, `DELETE ?uploadId=` drops it.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

type Answer = (status: number, headers?: Record<string, string>, body?: Buffer) => void;

/** A file in the fake edge's media store (uploads the bridge GETs, downloads it PUTs). */
export interface FakeMedia {
  bytes: Buffer;
  mimetype: string;
  fileName?: string;
}

interface Upload {
  key: string;
  mimetype: string;
  fileName?: string;
  parts: Buffer[];
}

const json = (body: unknown) => Buffer.from(JSON.stringify(body));

export function partsEndpoint(media: Map<string, FakeMedia>) {
  const uploads = new Map<string, Upload>();
  const open = (req: IncomingMessage, key: string, answer: Answer) => {
    const id = randomUUID();
    const name = req.headers["x-file-name"];
    uploads.set(id, {
      key,
      mimetype: req.headers["content-type"] ?? "",
      ...(typeof name === "string" ? { fileName: decodeURIComponent(name) } : {}),
      parts: [],
    });
    answer(200, { "content-type": "application/json" }, json({ uploadId: id }));
  };
  const complete = (upload: Upload, body: Buffer) => {
    const listed = (JSON.parse(body.toString()) as { parts: Array<{ partNumber: number }> }).parts;
    media.set(upload.key, {
      bytes: Buffer.concat(listed.map((part) => upload.parts[part.partNumber - 1] ?? Buffer.alloc(0))),
      mimetype: upload.mimetype,
      ...(upload.fileName ? { fileName: upload.fileName } : {}),
    });
  };
  return async (
    req: IncomingMessage,
    key: string,
    step: string | undefined,
    uploadId: string | null,
    answer: Answer,
  ): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (req.method === "POST" && step === undefined) return open(req, key, answer);
    const upload = uploadId ? uploads.get(uploadId) : undefined;
    if (!upload || upload.key !== key || !uploadId) return answer(404);
    if (req.method === "DELETE" && step === undefined) {
      uploads.delete(uploadId);
      return answer(204);
    }
    if (req.method === "PUT" && step !== undefined && /^\d+$/.test(step)) {
      upload.parts[Number(step) - 1] = body;
      return answer(200, { "content-type": "application/json" }, json({ etag: `etag-${step}` }));
    }
    if (req.method === "POST" && step === "complete") {
      uploads.delete(uploadId);
      complete(upload, body);
      return answer(204);
    }
    answer(405);
  };
}
