import { z } from "@hono/zod-openapi";
import { ApiError, badRequest, titleOf } from "./errors";
import { errorResponse } from "./openapi";

/** Profile and group pictures: one image file, sent as multipart/form-data. */

/** WhatsApp scales pictures down to 640 px; anything above this is not a picture someone meant. */
export const PICTURE_MAX_BYTES = 5 * 1024 * 1024;

export const PictureFormSchema = z.strictObject({
  file: z
    .custom<File>((value) => value instanceof File, { message: "file is required (an image)" })
    .openapi({ type: "string", format: "binary", description: "JPEG, PNG, WebP or GIF, at most 5 MiB" }),
});

export const pictureBody = {
  body: { content: { "multipart/form-data": { schema: PictureFormSchema } }, required: true },
};

export const pictureErrors = {
  413: errorResponse("Picture larger than 5 MiB"),
  415: errorResponse("Not multipart/form-data"),
} as const;

/** The image type from the file's first bytes: the declared type of an upload proves nothing. */
function sniffImage(bytes: Uint8Array): string | null {
  const starts = (...prefix: number[]) => prefix.every((byte, i) => bytes[i] === byte);
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes.length >= 12 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp";
  return null;
}

/** The validated picture: 413 above the limit, 400 when it is not an image. */
export async function readPicture(
  file: File,
): Promise<{ bytes: Uint8Array; mimetype: string; fileName: string }> {
  if (file.size > PICTURE_MAX_BYTES) {
    throw new ApiError(413, titleOf(413), `The picture exceeds ${PICTURE_MAX_BYTES} bytes (5 MiB)`);
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  const mimetype = sniffImage(bytes);
  if (!mimetype) throw badRequest("file must be a JPEG, PNG, WebP or GIF image");
  return { bytes, mimetype, fileName: file.name || "picture" };
}
