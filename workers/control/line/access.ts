import { findUserById, toPublicUser } from "../../auth/user-store";
import type { Env } from "../../core/env";
import type { Principal } from "../../core/principal";
import { database } from "../../db/client";
import type { SessionRow } from "../../db/schema";
import { membershipRole } from "../shared";
import { findLine } from "./store";

/**
 * Who acts on the company's line: the owner who linked it, while they still own it, limited to that
 * one session, send and read only (the owner's other sessions stay out of reach). Agents' sends (MCP)
 * and the line's own notices to members go out as this principal, through the gateway's REST routes
 * in-process (auth/in-process.ts `vouchFor`), so the gateway's own access rules apply.
 */
export type LineOwnerAccess =
  | { ok: true; session: SessionRow; principal: Principal }
  | { ok: false; status: 409; error: string };

export async function lineOwnerAccess(env: Env, companyId: string): Promise<LineOwnerAccess> {
  const db = database(env.DB);
  const found = await findLine(db, companyId);
  if (!found)
    return {
      ok: false,
      status: 409,
      error:
        "This company has no WhatsApp line: a company owner must link one of their sessions " +
        "(PUT /api/companies/{companyId}/line) before agents can use WhatsApp",
    };
  const [owner, role] = await Promise.all([
    findUserById(db, found.line.linkedByUserId),
    membershipRole(db, found.line.linkedByUserId, companyId),
  ]);
  if (!owner || role !== "owner")
    return {
      ok: false,
      status: 409,
      error:
        "The user who linked this company's line no longer owns the company: an owner must link the line again",
    };
  const principal: Principal = {
    via: "api_key",
    user: toPublicUser(owner),
    apiKeyId: `line:${companyId}`,
    grant: { scopes: ["read", "send"], sessionId: found.session.id, companyId: null, expiresAt: null },
  };
  return { ok: true, session: found.session, principal };
}
