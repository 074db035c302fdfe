import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, eq } from "drizzle-orm";
import { type ActorRef, authorColumns, refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type CompanySecretRow, companySecrets, companySecretVersions } from "../../db/schema";
import { conflict, conflictOnDuplicate } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { CompanyParamSchema } from "../companies";
import { activityInsert, companyForActor, controlContext, ensureVisible, requireBoard } from "../shared";
import { CreateSecretBodySchema, SecretParamSchema, SecretSchema, UpdateSecretBodySchema } from "./schemas";
import { deriveSecretKey, sealVersion, secretResource, valueChanged } from "./store";

/**
 * Company secrets. Listing shows metadata only; values are write-only (create, or PATCH with a new
 * value, which adds a version and keeps the old ones). Only board users create or change secrets:
 * an agent that could write a secret could also overwrite one its colleagues' runs depend on. Agents
 * may list the metadata, to reference secrets by id in adapterConfig.env.
 */
export const secretRoutes = createRouter();
const tags = ["Secrets"];

const duplicateKey = (key: string) => `A secret with key ${key} already exists in this company`;

function logEntry(db: Db, actor: ActorRef, row: CompanySecretRow, action: string, now: number, extra = {}) {
  // The value is never in the details; name, key and version are what an auditor needs.
  return activityInsert(
    db,
    {
      companyId: row.companyId,
      actor,
      action,
      entityType: "secret",
      entityId: row.id,
      details: { name: row.name, key: row.key, version: row.latestVersion, ...extra },
    },
    now,
  );
}

secretRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/secrets",
    tags,
    summary: "The company's secrets, metadata only (board and the company's agents)",
    description: "Never includes a value or its ciphertext. Sorted by key.",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(z.array(SecretSchema), "Secrets"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const rows = await db
      .select()
      .from(companySecrets)
      .where(eq(companySecrets.companyId, company.id))
      .orderBy(asc(companySecrets.key));
    return c.json(rows.map(secretResource), 200);
  },
);

secretRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/secrets",
    tags,
    summary: "Create a secret (board only)",
    description:
      "The value (1 byte to 64 KiB) is encrypted at rest (AES-256-GCM under SECRETS_MASTER_KEY) as " +
      "version 1 and never returned. key defaults to the name lower-cased with other characters " +
      'replaced by "_"; a key already used in the company is a 409. Agents get 403.',
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(CreateSecretBodySchema) },
    responses: {
      201: json(SecretSchema, "The secret's metadata"),
      ...controlErrors,
      409: controlError("The key is taken in this company"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "create secrets");
    const body = c.req.valid("json");
    const key = body.key ?? deriveSecretKey(body.name);
    const taken = await db
      .select({ id: companySecrets.id })
      .from(companySecrets)
      .where(and(eq(companySecrets.companyId, company.id), eq(companySecrets.key, key)))
      .get();
    if (taken) throw conflict(duplicateKey(key));
    const now = Date.now();
    const author = authorColumns(refOf(actor));
    const row: CompanySecretRow = {
      id: newId(),
      companyId: company.id,
      name: body.name,
      key,
      description: body.description ?? null,
      latestVersion: 1,
      createdByUserId: author.userId,
      createdByAgentId: author.agentId,
      createdAt: now,
      updatedAt: now,
    };
    const version = await sealVersion(c.env, row.id, 1, body.value, now);
    // The unique (company, key) index settles two simultaneous creates of the same key.
    await conflictOnDuplicate(
      db.batch([
        db.insert(companySecrets).values(row),
        db.insert(companySecretVersions).values(version),
        logEntry(db, refOf(actor), row, "secret.created", now),
      ]),
      duplicateKey(key),
    );
    return c.json(secretResource(row), 201);
  },
);

secretRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/secrets/{secretId}",
    tags,
    summary: "Change a secret's value, name or description (board only)",
    description:
      "A value different from the latest one becomes version latestVersion + 1. Earlier versions are " +
      "kept (for the record, and so run output is still scrubbed of them) but never handed out again: " +
      "a run whose config pins an older version fails with a configuration error. Sending the current " +
      "value again adds no version. The key cannot change (agents' configs may name it). Agents get 403.",
    security: controlAuth,
    request: { params: SecretParamSchema, ...jsonBody(UpdateSecretBodySchema) },
    responses: {
      200: json(SecretSchema, "The secret's metadata after the change"),
      ...controlErrors,
      409: controlError("Another update added a version at the same time; retry"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const found = await db
      .select()
      .from(companySecrets)
      .where(eq(companySecrets.id, c.req.valid("param").secretId))
      .get();
    const row = await ensureVisible(db, actor, found, "Secret");
    requireBoard(actor, "change secrets");
    const body = c.req.valid("json");
    const now = Date.now();
    const newValue = body.value !== undefined ? await valueChanged(db, row, body.value) : false;
    const next: CompanySecretRow = {
      ...row,
      name: body.name ?? row.name,
      description: body.description === undefined ? row.description : body.description,
      latestVersion: newValue ? row.latestVersion + 1 : row.latestVersion,
      updatedAt: now,
    };
    const changed = (["name", "description", "latestVersion"] as const).filter((f) => next[f] !== row[f]);
    if (changed.length === 0) return c.json(secretResource(row), 200);
    const statements = [
      db
        .update(companySecrets)
        .set({
          name: next.name,
          description: next.description,
          latestVersion: next.latestVersion,
          updatedAt: now,
        })
        .where(eq(companySecrets.id, row.id)),
      logEntry(db, refOf(actor), next, "secret.updated", now, {
        changed: changed.map((field) => (field === "latestVersion" ? "value" : field)),
      }),
    ] as const;
    if (newValue && body.value !== undefined) {
      const version = await sealVersion(c.env, row.id, next.latestVersion, body.value, now);
      // Two concurrent value changes both aim at the same version number: the unique index lets one win.
      await conflictOnDuplicate(
        db.batch([db.insert(companySecretVersions).values(version), ...statements]),
        "The secret was changed at the same time; retry",
      );
    } else {
      await db.batch(statements);
    }
    return c.json(secretResource(next), 200);
  },
);
