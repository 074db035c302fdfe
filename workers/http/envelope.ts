import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Gateway success envelope, exactly as the messaging spec lists it. */
export type GatewayOk<T> = { status: true; message: string; data: T };
export type GatewayError = { status: false; message: string; error: string };
export type ControlError = { error: string; details?: unknown; code?: string };

export const ok = <T>(message: string, data: T): GatewayOk<T> => ({ status: true, message, data });

export const gatewayError = (message: string, error: string): GatewayError => ({
  status: false,
  message,
  error,
});

const CONTROL_CODES: Partial<Record<ContentfulStatusCode, string>> = {
  400: "validation_error",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  410: "gone",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "unprocessable",
  429: "rate_limited",
  500: "internal_error",
  503: "unavailable",
};

export function controlError(status: ContentfulStatusCode, error: string, details?: unknown): ControlError {
  const body: ControlError = { error };
  if (details !== undefined) body.details = details;
  const code = CONTROL_CODES[status];
  if (code) body.code = code;
  return body;
}
