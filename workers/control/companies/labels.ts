import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, eq, sql } from "drizzle-orm";
import { refOf } from "../../core/actor";
import { iso, newId } from "../../db/client";
import { labels } from "../../db/schema";
import { conflict, conflictOnDuplicate } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { activityInsert, companyForActor, controlContext } from "../shared";
import { CompanyParamSchema } from "./schemas";

/** Issue labels of a company (issues filter by them with `labelId`). Names are unique per company, ignoring case. */
export const labelRoutes = createRouter();
const tags = ["Labels"];

type LabelRow = typeof labels.$inferSelect;

const LabelSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    name: z.string(),
    color: z.string().nullable(),
    createdAt: z.string().openapi({ format: "date-time" }),
  })
  // Not "Label": that name is the WhatsApp label's (gateway/labels.ts), and a second schema under one
  // name silently replaced the first in the document.
  .openapi("IssueLabel");

const CreateLabelBodySchema = z
  .strictObject({
    name: z.string().trim().min(1).max(50),
    color: z
      .string()
      .regex(/^#[0-9A-Fa-f]{6}$/, "color must be a hex colour like #1A2B3C")
      .nullable()
      .optional(),
  })
  .openapi("CreateLabelBody");

export const labelResource = (row: LabelRow) => ({
  id: row.id,
  companyId: row.companyId,
  name: row.name,
  color: row.color,
  createdAt: iso(row.createdAt),
});

const duplicate = (name: string) => `A label named ${name} already exists in this company`;

labelRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/labels",
    tags,
    summary: "The company's labels, by name",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(z.array(LabelSchema), "Labels"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const rows = await db
      .select()
      .from(labels)
      .where(eq(labels.companyId, company.id))
      .orderBy(asc(sql`lower(${labels.name})`), asc(labels.id));
    return c.json(rows.map(labelResource), 200);
  },
);

labelRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/labels",
    tags,
    summary: "Create a label",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(CreateLabelBodySchema) },
    responses: {
      201: json(LabelSchema, "Created"),
      ...controlErrors,
      409: controlError("A label of that name (ignoring case) exists"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const body = c.req.valid("json");
    const existing = await db
      .select({ id: labels.id })
      .from(labels)
      .where(and(eq(labels.companyId, company.id), sql`lower(${labels.name}) = lower(${body.name})`))
      .get();
    if (existing) throw conflict(duplicate(body.name));
    const now = Date.now();
    const row: LabelRow = {
      id: newId(),
      companyId: company.id,
      name: body.name,
      color: body.color ?? null,
      createdAt: now,
    };
    // The unique index settles a race between two creates of the exact same name.
    await conflictOnDuplicate(
      db.batch([
        db.insert(labels).values(row),
        activityInsert(
          db,
          {
            companyId: company.id,
            actor: refOf(actor),
            action: "label.created",
            entityType: "label",
            entityId: row.id,
            details: { name: row.name, color: row.color },
          },
          now,
        ),
      ]),
      duplicate(body.name),
    );
    return c.json(labelResource(row), 201);
  },
);
