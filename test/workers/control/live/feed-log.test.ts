// Where an IssueDO shard keeps its issues' live events (workers/control/live/feed-log.ts): which of
// its issues were ever watched is read once per life of the object, not once per issue it touches.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { keyedFeedLogs } from "../../../../workers/control/live";

/** The object's SQL storage with every statement it runs counted. */
function counted(sql: SqlStorage): { sql: SqlStorage; statements: () => number } {
  let statements = 0;
  const exec: SqlStorage["exec"] = (query, ...bindings) => {
    statements++;
    return sql.exec(query, ...bindings);
  };
  return { sql: Object.assign(Object.create(sql) as SqlStorage, { exec }), statements: () => statements };
}

const shard = () => env.ISSUE.getByName(`feed-log-test-${crypto.randomUUID()}`);

describe("an object's keyed feed logs", () => {
  it("asks its storage which feeds were watched once, however many issues it then touches", async () => {
    await runInDurableObject(shard(), (_, state) => {
      const { sql, statements } = counted(state.storage.sql);
      const logs = keyedFeedLogs(sql);
      expect(logs("issue-0").everWatched()).toBe(false);
      const afterFirst = statements();
      for (let i = 1; i <= 50; i++) expect(logs(`issue-${i}`).everWatched()).toBe(false);
      expect(statements()).toBe(afterFirst);
    });
  });

  it("a feed watched in an earlier life of the object is still watched in the next", async () => {
    await runInDurableObject(shard(), (_, state) => {
      const earlierLife = keyedFeedLogs(state.storage.sql);
      expect(earlierLife("watched").everWatched()).toBe(false);
      earlierLife("watched").markWatched();
      expect(earlierLife("watched").everWatched()).toBe(true);
      const nextLife = keyedFeedLogs(state.storage.sql);
      expect(nextLife("watched").everWatched()).toBe(true);
      expect(nextLife("other").everWatched()).toBe(false);
    });
  });
});
