// The RunDispatcher (durable-objects/run-dispatcher.ts) handles each runner's frames in order, one
// queue per runner: a runner whose frame never finishes (here a D1 call that hangs, simulated by
// holding its handling) holds up its own frames, not every other runner's of every company.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eventually } from "../../patience";
import { boardUser, seedCompany } from "../helpers";
import { openRunnerLink, registerRunner } from "../runner-link";

type Handle = (ws: WebSocket, link: { runnerId: string }, frame: unknown) => Promise<void>;

const connected = async (runnerId: string) =>
  (
    await env.DB.prepare("SELECT connected_at FROM runners WHERE id = ?").bind(runnerId).first<{
      connected_at: number | null;
    }>()
  )?.connected_at != null;

describe("the run dispatcher's queues", () => {
  it("a runner whose frame is stuck does not hold up another company's runner's hello", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const stuck = await registerRunner(owner, company.id);
    // Another company's runner: its owner shares nothing with the first.
    const otherOwner = await boardUser();
    const other = await registerRunner(otherOwner, (await seedCompany(otherOwner)).id);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const dispatcher = env.RUNS.getByName("runs");
    await runInDurableObject(dispatcher, (instance) => {
      const target = instance as unknown as { handle: Handle };
      const original = target.handle.bind(instance);
      target.handle = async (ws, link, frame) => {
        if (link.runnerId === stuck.id) await held;
        return original(ws, link, frame);
      };
    });
    try {
      const stuckLink = await openRunnerLink(stuck.token);
      const otherLink = await openRunnerLink(other.token);
      await eventually(() => connected(other.id));
      expect(await connected(stuck.id)).toBe(false);
      release();
      await eventually(() => connected(stuck.id));
      stuckLink.socket.close(1000, "done");
      otherLink.socket.close(1000, "done");
    } finally {
      release();
      await runInDurableObject(dispatcher, (instance) => {
        delete (instance as unknown as { handle?: Handle }).handle;
      });
    }
  });
});
