// Any model provider (issue 32), with the real OpenCode CLI: an agent whose model is served by an
// OpenAI-compatible server of the company's own (here a local fake speaking Chat Completions, as
// Ollama, vLLM or OpenRouter do) — `provider: {baseUrl, api: "openai-compatible", envKey}`, the key a
// company secret bound in the agent's env — completes a wake (checkout, comments, done through the
// API), the provider saw the secret's value as its bearer token and our model name, the run is
// priced with the company's price table for that provider, and the models endpoint, asked for that agent, lists what
// the provider's GET /v1/models answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentLoop, API_LOOP, expectWokenToDone, suffix } from "../support/agent-loop.ts";
import {
  type ChatRequest,
  chatText,
  type FakeCompatible,
  startFakeCompatible,
  toolResults,
} from "../support/fake-models/openai-compatible.ts";

const SECRET_VALUE = `sk-local-${suffix()}${suffix()}`;
const MODELS = ["qwen2.5-coder:7b", "llama3.1:8b"];
let loop: AgentLoop;
let fake: FakeCompatible;

/** The model runs the API loop in its shell tool, then answers once the tool's result is back. */
const script = (request: ChatRequest) =>
  toolResults(request) > 0
    ? { text: "Done, through the provider." }
    : { call: { name: "bash", arguments: { command: API_LOOP, description: "Works the issue" } } };

beforeAll(async () => {
  fake = await startFakeCompatible(script, {
    models: MODELS,
    usage: { prompt: 1_000_000, completion: 100_000 },
  });
  loop = await AgentLoop.start("opencode", {
    requests: fake.requests,
    text: (body: ChatRequest) => chatText(body),
    close: fake.close,
  });
});

afterAll(() => loop?.stop());

describe("a model provider of the company's own", () => {
  it("opencode against an OpenAI-compatible server with its key as a company secret completes a wake; the models endpoint lists the provider's models", async () => {
    const secret = await loop.board.call<{ id: string }>("POST", `/api/companies/${loop.companyId}/secrets`, {
      name: `Local models ${suffix()}`,
      value: SECRET_VALUE,
    });
    expect(secret.status, JSON.stringify(secret.body)).toBe(201);
    const agent = await loop.agent(`Local ${suffix()}`, "opencode_local", {
      model: `localai/${MODELS[0]}`,
      provider: { baseUrl: fake.url, api: "openai-compatible", envKey: "LOCALAI_API_KEY", name: "LocalAI" },
      env: {
        LOCALAI_API_KEY: { type: "secret_ref", secretId: secret.body.id },
        npm_config_offline: "true",
      },
    });

    // The company prices its provider's models (USD per million tokens); OpenCode knows no price for them.
    const prices = await loop.board.call("PUT", `/api/companies/${loop.companyId}/model-prices`, {
      prices: { localai: { "*": { input: 0.5, output: 1.5 } } },
    });
    expect(prices.status, JSON.stringify(prices.body)).toBe(200);

    const { run } = await expectWokenToDone(loop, agent, "Summarise the week");
    const first = fake.requests[0];
    expect(first?.headers.authorization).toBe(`Bearer ${SECRET_VALUE}`);
    expect(first?.body.model).toBe(MODELS[0]);
    expect(first?.body.stream).toBe(true);
    // Two requests of 1M prompt and 100k completion tokens at $0.50 / $1.50 per million: $1.30.
    expect(run.usage).toMatchObject({ provider: "localai", model: MODELS[0] });
    expect(run.costCents).toBe(130);
    // The secret's value is in no stored log.
    const log = await loop.log(run.id);
    expect(log).not.toContain(SECRET_VALUE);

    const models = await loop.board.call<Array<{ id: string; label: string; default?: boolean }>>(
      "GET",
      `/api/companies/${loop.companyId}/adapters/opencode_local/models?agentId=${agent.id}`,
    );
    expect(models.status).toBe(200);
    expect(models.body).toEqual([
      { id: `localai/${MODELS[0]}`, label: MODELS[0], default: true },
      { id: `localai/${MODELS[1]}`, label: MODELS[1] },
    ]);
    expect(fake.modelListings.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET_VALUE}`);

    // Without the agent (or for another type) the usual catalogue answers; another company's agent is 404.
    const catalogue = await loop.board.call<Array<{ id: string }>>(
      "GET",
      `/api/companies/${loop.companyId}/adapters/opencode_local/models`,
    );
    expect(catalogue.body.map((model) => model.id)).not.toContain(`localai/${MODELS[1]}`);
    const other = await loop.board.call<{ id: string }>("POST", "/api/companies", {
      name: `Other ${suffix()}`,
    });
    const foreign = await loop.board.call(
      "GET",
      `/api/companies/${other.body.id}/adapters/opencode_local/models?agentId=${agent.id}`,
    );
    expect(foreign.status).toBe(404);
  });
});
