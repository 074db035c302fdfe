// `npm start` serves the Worker built once by workerd, without wrangler dev's reload proxy (as in
// production, and what the benchmarks measure); `npm run dev` runs it under wrangler dev. Both must be
// the same product on the same local data, the cron included: the local trigger drives the scheduled
// handler.
import { afterAll, describe, expect, it } from "vitest";
import { adminClient } from "../support/api.ts";
import {
  createAgent,
  createCompany,
  everyMinuteRoutine,
  scheduledRoutineRun,
  sh,
} from "../support/control-runs.ts";
import { type Stack, startStack } from "../support/stack.ts";

const stacks: Stack[] = [];

afterAll(async () => {
  for (const stack of stacks) await stack.stop().catch(() => undefined);
});

describe("npm start (served) and npm run dev", () => {
  it("serves the API and fires an every-minute routine from a database npm run dev then opens with the same data", async () => {
    const served = await startStack({ env: { BRIDGE: "0" } });
    stacks.push(served);
    const admin = await adminClient(served.baseUrl);
    const companyId = await createCompany(admin);
    // Made first, so the minute it waits for overlaps the checks below.
    const createdAt = Date.now();
    const routineId = await everyMinuteRoutine(
      admin,
      companyId,
      (await createAgent(admin, companyId, sh("true"))).id,
    );

    const health = await fetch(`${served.baseUrl}/api/health`);
    expect(health.status).toBe(200);
    // A request without credentials gets the app's own JSON 401: the Worker itself answered.
    const anonymous = await fetch(`${served.baseUrl}/api/sessions`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { status: boolean }).status).toBe(false);

    // Nobody calls the cron endpoint: the local trigger of `npm start` does.
    const fired = await scheduledRoutineRun(admin, routineId, 70_000);
    expect(Date.parse(fired.createdAt) - createdAt).toBeLessThan(70_000);
    const company = (await admin.call<{ name: string }>("GET", `/api/companies/${companyId}`)).body;
    await served.stop({ keepState: true });

    const dev = await startStack({ dev: true, stateDir: served.stateDir, env: { BRIDGE: "0" } });
    stacks.push(dev);
    const read = await fetch(`${dev.baseUrl}/api/companies/${companyId}`, {
      headers: { "X-API-Key": admin.key },
    });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { name: string }).name).toBe(company.name);
  }, 180_000);
});
