/**
 * Frames on the runner link: a registered runner dials `/runner/v1/link` (Bearer <runner token>) and
 * the edge's RunDispatcher hands it queued heartbeat runs of the companies it serves. Shared by both
 * ends, validated on receipt at both ends.
 */
import { z } from "zod";
import { TranscriptEventSchema } from "./transcript.ts";

/** Characters of output kept per frame; the runner splits longer output. */
export const LOG_FRAME_MAX_CHARS = 16 * 1024;

/** How many models of one CLI a runner reports. */
export const CLI_MODELS_MAX = 300;

/** What a runner tells the edge about itself when its link opens (shown in the runner list). */
export const RunnerHelloSchema = z.object({
  type: z.literal("hello"),
  version: z.string().min(1).max(64),
  slots: z.number().int().min(1).max(64),
  platform: z.string().max(32),
  arch: z.string().max(32),
  node: z.string().max(32),
  /** The OS user agent processes run as, when not the runner's own (RUNNER_RUN_AS). */
  runAs: z.string().max(64).nullable(),
  /** The agent CLIs its adapters start, and their `--version` (null: not installed). */
  clis: z
    .array(
      z.object({
        adapterType: z.string().max(64),
        command: z.string().max(256),
        version: z.string().max(200).nullable(),
        /** The models the CLI itself lists (`codex debug models`, `opencode models`), where it can. */
        models: z.array(z.string().min(1).max(200)).max(CLI_MODELS_MAX).optional(),
      }),
    )
    .max(32)
    .optional(),
});

/** A CLI's conversation, as its adapter resumes it: the id the CLI gave, and where it was made. */
export const RunSessionSchema = z.object({
  id: z.string().min(1).max(256),
  cwd: z.string().max(4096),
});
export type RunSession = z.infer<typeof RunSessionSchema>;

export const RunnerFrameSchema = z.discriminatedUnion("type", [
  RunnerHelloSchema,
  /** Ready for up to `slots` more runs. */
  z.object({ type: z.literal("claim"), slots: z.number().int().min(1).max(64) }),
  /** Output of a run, in order (`seq` counts from 0 per run). */
  z.object({
    type: z.literal("log"),
    runId: z.string().min(1).max(64),
    seq: z.number().int().min(0),
    stream: z.enum(["stdout", "stderr", "system"]),
    text: z.string().max(LOG_FRAME_MAX_CHARS),
  }),
  /** One transcript event of a run, parsed by its adapter from the CLI's output (`seq` from 0 per run). */
  z.object({
    type: z.literal("event"),
    runId: z.string().min(1).max(64),
    seq: z.number().int().min(0),
    event: TranscriptEventSchema,
  }),
  /**
   * The issues whose git worktrees the runner holds (sent on connect, every minute, and when the edge
   * asks): the edge answers with `closed-issues`, so the runner removes the worktrees of finished work.
   */
  z.object({ type: z.literal("workspaces"), issueIds: z.array(z.string().min(1).max(64)).max(1_000) }),
  /** Still alive (sent every 20 s, with or without runs) and working on these runs. */
  z.object({ type: z.literal("heartbeat"), runIds: z.array(z.string().min(1).max(64)).max(64) }),
  z.object({
    type: z.literal("finish"),
    runId: z.string().min(1).max(64),
    exitCode: z.number().int().nullable(),
    timedOut: z.boolean(),
    /**
     * How many log frames the runner sent for the run: frames can be delivered out of order, so the
     * edge holds the finish back until it has them all (or a grace period passes).
     */
    logFrames: z.number().int().min(0),
    /** How many event frames the runner sent for the run (held back like log frames). */
    eventFrames: z.number().int().min(0).optional(),
    /**
     * Why the run failed, readably: the command could not start (the CLI is not installed, a bad
     * cwd …), its configuration is wrong, the CLI reported an error or printed no result. Starting
     * with `budget_exceeded`: the CLI stopped itself at the run's budgetCents.
     */
    error: z.string().max(2000).optional(),
    /** From the CLI's own output (its result event), or the last `PLATFORM_USAGE {json}` line. */
    usage: z.record(z.string(), z.unknown()).optional(),
    costCents: z.number().int().min(0).optional(),
    /**
     * The CLI session the run ended in, to resume on the next wake for the same issue; null: the one
     * it was handed is gone (forget it); absent: nothing to say.
     */
    session: RunSessionSchema.nullable().optional(),
    /**
     * The CLI ran in the session it was handed (`session` of the assignment) instead of a fresh one;
     * false: it started afresh (none handed, made in another cwd, or rejected). Absent: an adapter
     * without sessions, or an older runner.
     */
    resumed: z.boolean().optional(),
  }),
]);
export type RunnerFrame = z.infer<typeof RunnerFrameSchema>;

/** Bounds on the skills a run carries: each one's text, how many, and all of them together. */
export const SKILL_CONTENT_MAX_CHARS = 32 * 1024;
export const SKILLS_MAX = 32;
/** A routine payload larger than this (as JSON text) is not handed to the run; see RunAssignment. */
export const WAKE_PAYLOAD_MAX_CHARS = 256 * 1024;
export const SKILLS_TOTAL_MAX_CHARS = 192 * 1024;

/**
 * A skill the agent's CLI gets for the run: the platform's own (the heartbeat protocol and API) and
 * the company skills the agent wants (desiredSkills). `slug` names its directory and is its name for
 * the CLI (lower-case letters, digits and dashes, unique in the run).
 */
export const RunSkillSchema = z.object({
  key: z.string().min(1).max(200),
  slug: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/),
  name: z.string().min(1).max(200),
  description: z.string().max(1024),
  content: z.string().max(SKILL_CONTENT_MAX_CHARS),
});
export type RunSkill = z.infer<typeof RunSkillSchema>;

/** USD per million tokens (cached input defaults to input). */
export const ModelPriceSchema = z.object({
  input: z.number().min(0).max(100_000),
  cachedInput: z.number().min(0).max(100_000).optional(),
  output: z.number().min(0).max(100_000),
});

/** provider → model (or `*`, every other model of the provider) → prices. */
export const ModelPricesSchema = z.record(
  z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
  z.record(z.string().min(1).max(200), ModelPriceSchema),
);
export type ModelPrices = z.infer<typeof ModelPricesSchema>;

export const RunAssignmentSchema = z.object({
  runId: z.string(),
  agentId: z.string(),
  /** Picks the runner's adapter (bridge/src/runner/adapters); an unknown type runs as `process`. */
  adapterType: z.string(),
  /** adapterConfig.command, or the adapter's own program (e.g. `claude`). */
  command: z.string().min(1),
  args: z.array(z.string()),
  /** The project's primary workspace (its cwd), else adapterConfig.cwd; null: a directory of the runner's. */
  cwd: z.string().nullable(),
  /**
   * The issue the run works on: when cwd is in a git repository the runner gives each issue its own
   * worktree and branch (switchboard/<identifier>), unless adapterConfig.workspaceStrategy is "shared".
   */
  issue: z
    .object({ id: z.string().min(1).max(64), identifier: z.string().min(1).max(64) })
    .nullable()
    .optional(),
  /** Rendered prompt, written to the process's stdin. */
  prompt: z.string(),
  timeoutSec: z.number().int().min(1),
  /** PLATFORM_* values and resolved secrets; the runner adds nothing else from the edge. */
  env: z.record(z.string(), z.string()),
  /** The agent's adapterConfig without env and promptTemplate: the adapter's own options. */
  adapterConfig: z.record(z.string(), z.unknown()).optional(),
  /** The platform's heartbeat protocol with this edge's URLs, for adapters that give it to the CLI. */
  protocol: z
    .string()
    .max(64 * 1024)
    .optional(),
  /** The CLI session of this agent and issue to resume, if an earlier run left one. */
  session: RunSessionSchema.nullable().optional(),
  /**
   * The JSON payload of the routine run that queued this wake (a webhook's body, a manual run's
   * payload): the runner writes it to a file in the run's own directory and names it in
   * PLATFORM_WAKE_PAYLOAD_PATH. Absent or null: none.
   */
  wakePayload: z.string().max(WAKE_PAYLOAD_MAX_CHARS).nullable().optional(),
  /** Skills for adapters whose CLI takes them (the platform's first); bounded as above. */
  skills: z.array(RunSkillSchema).max(SKILLS_MAX).optional(),
  /**
   * The most this run may spend, in cents: what was left of its agent's and its company's monthly
   * budgets when it started (the smaller). Absent: neither has a budget. A CLI that can stop itself at
   * a cost (Claude Code's --max-budget-usd) is given it; the run then fails with `budget_exceeded`.
   */
  budgetCents: z.number().int().min(1).optional(),
  /**
   * The company's prices per provider (PUT /companies/{id}/model-prices): the run's tokens are priced
   * with the entry for its provider and model (else the provider's `*`) unless the agent set its own.
   */
  modelPrices: ModelPricesSchema.optional(),
});
export type RunAssignment = z.infer<typeof RunAssignmentSchema>;

export const DispatcherFrameSchema = z.discriminatedUnion("type", [
  /** Runs may be waiting: claim if you have free slots. */
  z.object({ type: z.literal("nudge") }),
  z.object({ type: z.literal("run"), run: RunAssignmentSchema }),
  /** Stop this run (someone cancelled it); the runner stops its process group and reports finish. */
  z.object({ type: z.literal("cancel"), runId: z.string() }),
  /** An issue was closed: a runner holding worktrees asks which (a `workspaces` frame). */
  z.object({ type: z.literal("check-workspaces") }),
  /** Of the issues a `workspaces` frame named, those done, cancelled or gone: remove their worktrees. */
  z.object({ type: z.literal("closed-issues"), issueIds: z.array(z.string()) }),
]);
export type DispatcherFrame = z.infer<typeof DispatcherFrameSchema>;
