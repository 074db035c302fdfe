/**
 * The routes that take a file, and only as multipart/form-data: they alone get the upload limit. Any
 * other body, JSON on any path included, is held to the JSON limit.
 */
const UPLOAD_ROUTES: ReadonlyArray<{ method: string; path: RegExp }> = [
  { method: "POST", path: /^\/api\/messages\/[^/]+\/[^/]+\/media$/ },
  { method: "PUT", path: /^\/api\/profile\/[^/]+\/picture$/ },
  { method: "PUT", path: /^\/api\/groups\/[^/]+\/[^/]+\/picture$/ },
  { method: "POST", path: /^\/api\/companies\/[^/]+\/logo$/ },
  { method: "POST", path: /^\/api\/issues\/[^/]+\/attachments$/ },
];

/** A route that takes its body as multipart/form-data (a file), not JSON. */
export function isUploadRoute(method: string, path: string): boolean {
  return UPLOAD_ROUTES.some((route) => route.method === method && route.path.test(path));
}

export function isUpload(method: string, path: string, contentType: string | undefined): boolean {
  return (contentType ?? "").toLowerCase().startsWith("multipart/form-data") && isUploadRoute(method, path);
}

/**
 * The media upload route: multipart or the raw file, streamed into R2 under each kind's limit. JSON
 * there is a mistake (the route answers 415), held to the JSON limit like JSON anywhere.
 */
const STREAMED_UPLOAD = /^\/api\/messages\/[^/]+\/[^/]+\/media$/;

export function isStreamedUpload(method: string, path: string, contentType: string | undefined): boolean {
  return method === "POST" && STREAMED_UPLOAD.test(path) && !isJsonType(contentType);
}

export const isJsonType = (contentType: string | undefined) =>
  /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType ?? "");
