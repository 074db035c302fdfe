import { createRoute, z } from "@hono/zod-openapi";
import { PERSON_JID } from "../../bridge/src/protocol/messaging";
import { ok } from "../http/envelope";
import { authenticated, createRouter, errorResponse, gatewayErrors, gatewayOk, json } from "../http/openapi";
import { messagingErrors, SessionParamSchema } from "./messages";
import { accessibleSession, callSession } from "./sessions";

/** The session's contacts (from the local store) and blocking. Mounted at /api/contacts. */
export const contactsRoutes = createRouter();
const tags = ["Contacts"];

const ContactSchema = z
  .object({
    jid: z.string(),
    lid: z.string().nullable(),
    name: z.string().nullable().openapi({ description: "The name saved in the account's address book" }),
    notify: z.string().nullable().openapi({ description: "The name the contact gave itself (push name)" }),
    verifiedName: z.string().nullable(),
    profilePic: z.string().nullable(),
    blocked: z.boolean(),
    updatedAt: z.string(),
  })
  .openapi("Contact");

const ContactsQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: z
    .string()
    .regex(/^(all|[1-9]\d{0,2}|1000)$/, "a number from 1 to 1000, or `all`")
    .default("10")
    .openapi({ description: "Page size, or `all` for every contact", example: "10" }),
  search: z
    .string()
    .max(100)
    .optional()
    .openapi({ description: "Matches name, notify, verifiedName or JID (case-insensitive)" }),
});

const ContactsPageSchema = z.object({
  status: z.literal(true),
  message: z.string(),
  data: z.array(ContactSchema),
  meta: z.object({
    total: z.number().int(),
    page: z.number().int(),
    limit: z.union([z.number().int(), z.literal("all")]),
    totalPages: z.number().int(),
  }),
});

contactsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}",
    tags,
    summary: "Contacts, paged and searchable (from the local store: works while disconnected)",
    security: authenticated,
    request: { params: SessionParamSchema, query: ContactsQuerySchema },
    responses: {
      200: json(ContactsPageSchema, "A page of contacts; `meta` sits next to `data`"),
      ...gatewayErrors,
      403: messagingErrors[403],
      404: errorResponse("Session not found"),
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const { page, limit, search } = c.req.valid("query");
    const { contacts, meta } = await callSession(c.env, session, "contact.list", {
      page,
      limit: limit === "all" ? null : Number(limit),
      ...(search?.trim() ? { search: search.trim() } : {}),
    });
    return c.json({ status: true as const, message: "Contacts retrieved", data: contacts, meta }, 200);
  },
);

const ContactParamsSchema = SessionParamSchema.extend({
  // Built here, not from the bridge's schema: zod 4 gives `.openapi()` only to schemas created after
  // @hono/zod-openapi is loaded, and the protocol module may load first.
  jid: z
    .string()
    .regex(PERSON_JID, "must be <number>@s.whatsapp.net")
    .openapi({
      param: { name: "jid", in: "path" },
      description: "URL-encoded person JID",
      example: "628123456789@s.whatsapp.net",
    }),
});

const BlockResultSchema = z.object({ jid: z.string(), blocked: z.boolean() });

for (const action of ["block", "unblock"] as const) {
  contactsRoutes.openapi(
    createRoute({
      method: "post",
      path: `/{sessionId}/{jid}/${action}`,
      tags,
      summary: action === "block" ? "Block a contact on WhatsApp" : "Unblock a contact on WhatsApp",
      security: authenticated,
      request: { params: ContactParamsSchema },
      responses: { 200: json(gatewayOk(BlockResultSchema), "Done"), ...messagingErrors },
    }),
    async (c) => {
      const { sessionId, jid } = c.req.valid("param");
      const session = await accessibleSession(c, sessionId);
      const data = await callSession(c.env, session, "contact.block", { jid, block: action === "block" });
      return c.json(ok(action === "block" ? "Contact blocked" : "Contact unblocked", data), 200);
    },
  );
}
