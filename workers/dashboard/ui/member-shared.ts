import type { z } from "zod";
import type { MemberSchema } from "../../control/members";
import type { BoardContext } from "./board-shared";
import { apiCompanyPath } from "./board-shared";

export type Member = z.infer<typeof MemberSchema>;
export type MemberRole = Member["role"];

/** The signed-in person's role in the company (the API's /members/me), for showing only what they may do. */
export async function loadMyRole(c: BoardContext, companyId: string): Promise<MemberRole> {
  const me = await c.var.api.get<Member>(`${apiCompanyPath(companyId)}/members/me`);
  return me.role;
}

/** Viewers read; the API refuses their writes, so the pages leave out the forms that would make them. */
export const mayChange = (role: MemberRole) => role !== "viewer";

export const READ_ONLY_NOTE = "You are a viewer of this company: you can read everything but change nothing.";
