import { z } from "@hono/zod-openapi";
import { EmailSchema, NewPasswordSchema } from "../../auth/schemas";
import { MEMBERSHIP_ROLES } from "../../db/schema";

const Timestamp = z.string().openapi({ format: "date-time" });

export const MEMBER_INVITE_DEFAULT_HOURS = 72;
export const MEMBER_INVITE_MAX_HOURS = 30 * 24;
export const MEMBER_INVITE_NOTE_MAX = 500;

export const MemberParamSchema = z.object({ companyId: z.string(), userId: z.string() });

export const AGENT_KEY_CHOICES = ["revoke", "transfer"] as const;
export type AgentKeyChoice = (typeof AGENT_KEY_CHOICES)[number];

export const RemoveMemberQuerySchema = z.object({
  agentKeys: z
    .enum(AGENT_KEY_CHOICES)
    .default("revoke")
    .openapi({
      description:
        "What happens to the agent keys the member minted in this company: `revoke` (default; they answer " +
        "401 at once) or `transfer` (they keep working and are re-owned by the owner removing the member; " +
        "not when leaving).",
    }),
});
export const MemberInviteParamSchema = z.object({ companyId: z.string(), inviteId: z.string() });
export const InviteTokenParamSchema = z.object({ token: z.string().min(1).max(200) });

export const RoleSchema = z
  .enum(MEMBERSHIP_ROLES)
  .openapi({ description: "owner: everything; member: everything but owner-only operations; viewer: reads" });

export const MemberSchema = z
  .object({
    userId: z.string(),
    name: z.string(),
    email: z.string(),
    role: RoleSchema,
    joinedAt: Timestamp,
  })
  .openapi("CompanyMember");

export const MemberListSchema = z.object({ members: z.array(MemberSchema) }).openapi("CompanyMemberList");

export const UpdateMemberBodySchema = z.strictObject({ role: RoleSchema }).openapi("UpdateCompanyMemberBody");

export const CreateMemberInviteBodySchema = z
  .strictObject({
    role: RoleSchema,
    expiresInHours: z
      .number()
      .int()
      .min(1)
      .max(MEMBER_INVITE_MAX_HOURS)
      .optional()
      .openapi({
        description: `Default ${MEMBER_INVITE_DEFAULT_HOURS}, at most ${MEMBER_INVITE_MAX_HOURS} (30 days)`,
      }),
    email: EmailSchema.optional().openapi({
      description:
        "Binds the invite to this person: only an account with this e-mail may use it, and someone " +
        "without an account may create one with it (the link proves the address). Without it the link " +
        "is for an existing account only.",
    }),
    note: z
      .string()
      .trim()
      .min(1)
      .max(MEMBER_INVITE_NOTE_MAX)
      .optional()
      .openapi({ description: "For the owners: tells pending invites apart. The invitee sees it too." }),
  })
  .openapi("CreateMemberInviteBody");

export const MEMBER_INVITE_STATES = ["pending", "used", "revoked", "expired"] as const;

export const MemberInviteSchema = z
  .object({
    id: z.string(),
    role: RoleSchema,
    email: z.string().nullable().openapi({ description: "The e-mail it is bound to, or null" }),
    note: z.string().nullable(),
    state: z.enum(MEMBER_INVITE_STATES),
    expiresAt: Timestamp,
    createdAt: Timestamp,
    createdByUserId: z.string().nullable(),
    usedAt: Timestamp.nullable(),
    usedByUserId: z.string().nullable(),
    revokedAt: Timestamp.nullable(),
  })
  .openapi("MemberInvite");

export const MemberInviteListSchema = z
  .object({ invites: z.array(MemberInviteSchema) })
  .openapi("MemberInviteList");

export const CreatedMemberInviteSchema = MemberInviteSchema.extend({
  token: z.string().openapi({ description: "`swm_…`; shown only here, only its SHA-256 is stored" }),
  url: z.string().openapi({ description: "`<origin>/invites/<token>`: the dashboard page that joins" }),
}).openapi("CreatedMemberInvite");

export const AcceptedInviteSchema = z
  .object({ companyId: z.string(), companyName: z.string(), role: RoleSchema })
  .openapi("AcceptedMemberInvite");

export const InvitePreviewSchema = z
  .object({
    companyId: z.string(),
    companyName: z.string(),
    role: RoleSchema,
    email: z.string().nullable().openapi({
      description: "The e-mail it is bound to: only that account may join, or sign up, with it",
    }),
    note: z.string().nullable(),
    state: z.enum(MEMBER_INVITE_STATES),
    expiresAt: Timestamp,
    runners: z
      .array(
        z.object({
          name: z.string(),
          ownerName: z.string().openapi({ description: "The person who registered it" }),
          connected: z.boolean(),
        }),
      )
      .openapi({
        description:
          "The runners that run the company's agents now (oldest first). Joining does not add yours: " +
          "a runner of yours serves the company only once you attach it.",
      }),
  })
  .openapi("MemberInvitePreview");

export const SignupBodySchema = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    password: NewPasswordSchema.openapi({ description: "8 to 256 characters" }),
    email: EmailSchema.optional().openapi({
      description: "If sent, must be the invite's own e-mail (the account is always created with that one)",
    }),
  })
  .openapi("MemberInviteSignupBody");

export const SignupResultSchema = z
  .object({
    companyId: z.string(),
    companyName: z.string(),
    role: RoleSchema,
    user: z.object({
      id: z.string(),
      name: z.string(),
      email: z.string(),
      role: z.enum(["STAFF"]).openapi({ description: "The account role every sign-up gets" }),
    }),
    csrfToken: z.string().openapi({ description: "For the new browser session's writes (X-CSRF-Token)" }),
  })
  .openapi("MemberInviteSignup");
