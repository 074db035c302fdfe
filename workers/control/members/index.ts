/**
 * A company's people: memberships with roles (owner, member, viewer) and the invite links that add
 * them. HTTP in routes.ts and invite-routes.ts; the role rules every route obeys are in ../shared/roles.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export { MEMBER_INVITE_PREFIX } from "./invites";
export type {
  CreatedMemberInviteSchema,
  InvitePreviewSchema,
  MemberInviteSchema,
  MemberSchema,
} from "./schemas";
