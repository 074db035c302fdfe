import { createRoute } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { Context } from "hono";
import { sniffMimetype } from "../../../bridge/src/protocol/mime";
import { type Actor, authorColumns, refOf } from "../../core/actor";
import type { AppEnv } from "../../core/env";
import { newId } from "../../db/client";
import { type CompanyRow, companyAssets } from "../../db/schema";
import { ApiError, badRequest, forbidden, notFound, titleOf } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json } from "../../http/openapi";
import { activityInsert, companyForActor, controlContext, requireOwnerAuthority } from "../shared";
import { AssetParamSchema, CompanyParamSchema, LogoUploadedSchema } from "./schemas";

/**
 * Company logos: upload (multipart `file`, checked by its bytes, stored in R2) and serving them back.
 * The upload only stores the asset; PATCH logoAssetId makes it the logo, as the spec describes.
 */
export const companyLogoRoutes = createRouter();
const tags = ["Companies"];

export const LOGO_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"] as const;
export const LOGO_MAX_BYTES = 2 * 1024 * 1024;
const binary = { type: "string", format: "binary" } as const;

const logoKey = (companyId: string, assetId: string) => `companies/${companyId}/logos/${assetId}`;

/** Branding follows the PATCH rule for logoAssetId: board users or the company's CEO agent. */
function authorizeLogo(actor: Actor): void {
  if (actor.type === "agent" && actor.role !== "ceo") {
    throw forbidden("Only board users and the company's CEO agent may upload a logo");
  }
}

const unsupported = (detail: string) => new ApiError(415, titleOf(415), detail);

/**
 * The uploaded image: 415 unless multipart with a declared PNG/JPEG/WebP/GIF, 413 above 2 MiB, 400
 * when the file is missing or its bytes are not the type it claims (the declaration proves nothing).
 */
async function readLogo(c: Context<AppEnv>): Promise<{ bytes: Uint8Array; contentType: string }> {
  if (!(c.req.header("content-type") ?? "").toLowerCase().startsWith("multipart/form-data")) {
    throw unsupported("Send the logo as multipart/form-data with the image in the field `file`");
  }
  let form: Record<string, string | File | (string | File)[]>;
  try {
    form = await c.req.parseBody();
  } catch {
    throw badRequest("Malformed multipart body");
  }
  const file = form.file;
  if (!(file instanceof File)) throw badRequest("file is required (a PNG, JPEG, WebP or GIF image)");
  const declared = file.type.split(";")[0]?.trim().toLowerCase() ?? "";
  if (!(LOGO_TYPES as readonly string[]).includes(declared)) {
    throw unsupported(
      `file type ${declared || "(none)"} is not allowed; use one of ${LOGO_TYPES.join(", ")}`,
    );
  }
  if (file.size > LOGO_MAX_BYTES) {
    throw new ApiError(413, titleOf(413), `The logo exceeds ${LOGO_MAX_BYTES} bytes (2 MiB)`);
  }
  if (file.size === 0) throw badRequest("file is empty");
  const bytes = new Uint8Array(await file.arrayBuffer());
  const actual = sniffMimetype(bytes);
  if (actual !== declared) {
    throw badRequest(`file is declared as ${declared} but its content is ${actual ?? "not a known image"}`);
  }
  return { bytes, contentType: declared };
}

/** R2 first, then the row and its activity in one batch; a failed batch removes the orphaned object. */
async function storeLogo(
  c: Context<AppEnv>,
  actor: Actor,
  company: CompanyRow,
  logo: { bytes: Uint8Array; contentType: string },
) {
  const { db } = controlContext(c);
  const assetId = newId();
  const key = logoKey(company.id, assetId);
  await c.env.ASSETS.put(key, logo.bytes, { httpMetadata: { contentType: logo.contentType } });
  const now = Date.now();
  const author = authorColumns(refOf(actor));
  try {
    await db.batch([
      db.insert(companyAssets).values({
        id: assetId,
        companyId: company.id,
        kind: "logo",
        contentType: logo.contentType,
        byteSize: logo.bytes.byteLength,
        r2Key: key,
        createdByUserId: author.userId,
        createdByAgentId: author.agentId,
        createdAt: now,
      }),
      activityInsert(
        db,
        {
          companyId: company.id,
          actor: refOf(actor),
          action: "company.logo_uploaded",
          entityType: "company",
          entityId: company.id,
          details: { assetId, contentType: logo.contentType, byteSize: logo.bytes.byteLength },
        },
        now,
      ),
    ]);
  } catch (error) {
    await c.env.ASSETS.delete(key).catch(() => undefined);
    throw error;
  }
  return assetId;
}

companyLogoRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/logo",
    tags,
    summary: "Upload a logo image (owners or the CEO agent); then PATCH logoAssetId to use it",
    description: "multipart/form-data with the image in `file`: PNG, JPEG, WebP or GIF, at most 2 MiB.",
    security: controlAuth,
    request: {
      params: CompanyParamSchema,
      body: {
        content: {
          "multipart/form-data": {
            schema: { type: "object", properties: { file: binary }, required: ["file"] },
          },
        },
        required: true,
      },
    },
    responses: {
      201: json(LogoUploadedSchema, "Stored"),
      ...controlErrors,
      413: controlError("Image larger than 2 MiB"),
      415: controlError("Not multipart/form-data, or not a PNG, JPEG, WebP or GIF"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    authorizeLogo(actor);
    await requireOwnerAuthority(db, actor, company.id, "upload the company's logo");
    const assetId = await storeLogo(c, actor, company, await readLogo(c));
    return c.json({ assetId }, 201);
  },
);

companyLogoRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/assets/{assetId}",
    tags,
    summary: "The bytes of an uploaded asset (a logo), with its content type",
    security: controlAuth,
    request: { params: AssetParamSchema },
    responses: {
      200: {
        content: Object.fromEntries(LOGO_TYPES.map((type) => [type, { schema: binary }])),
        description: "The image",
      },
      ...controlErrors,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { companyId, assetId } = c.req.valid("param");
    const company = await companyForActor(db, actor, companyId);
    const asset = await db
      .select()
      .from(companyAssets)
      .where(and(eq(companyAssets.id, assetId), eq(companyAssets.companyId, company.id)))
      .get();
    const object = asset ? await c.env.ASSETS.get(asset.r2Key) : null;
    if (!asset || !object) throw notFound("Asset not found");
    return new Response(object.body, {
      status: 200,
      headers: {
        "Content-Type": asset.contentType,
        "Content-Length": String(asset.byteSize),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'",
      },
    });
  },
);
