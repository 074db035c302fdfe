import { asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { lineMembers, users } from "../../db/schema";
import { type RecentNotice, recentNotices } from "./notices";
import { findLine } from "./store";

/** The company's line as its settings page shows it: the session, who linked a number, the last notices. */
export interface LineOverview {
  line: { sessionId: string; name: string; state: string; linkedByUserId: string } | null;
  members: Array<{ name: string; phone: string; verified: boolean; notify: string[] }>;
  notices: RecentNotice[];
}

export async function lineOverview(db: Db, companyId: string): Promise<LineOverview> {
  const [found, members, notices] = await Promise.all([
    findLine(db, companyId),
    db
      .select({
        name: users.name,
        phone: lineMembers.phone,
        verifiedAt: lineMembers.verifiedAt,
        notify: lineMembers.notify,
      })
      .from(lineMembers)
      .innerJoin(users, eq(users.id, lineMembers.userId))
      .where(eq(lineMembers.companyId, companyId))
      .orderBy(asc(users.name))
      .all(),
    recentNotices(db, companyId, 20),
  ]);
  return {
    line: found
      ? {
          sessionId: found.session.sessionId,
          name: found.session.name,
          state: found.session.state,
          linkedByUserId: found.line.linkedByUserId,
        }
      : null,
    members: members.map((row) => ({
      name: row.name,
      phone: row.phone,
      verified: row.verifiedAt !== null,
      notify: row.notify,
    })),
    notices,
  };
}
