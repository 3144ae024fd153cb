// Mastra (`@mastra/core`): an `Agent` with a `createTool` tool, registered on a `Mastra`
// whose observability exports to OpenTelemetry through `@mastra/otel-exporter` as its docs
// say (`Observability` with an `OtelExporter` on the generic `custom` provider). That
// exporter reads no OTEL_* variable itself: the endpoint, the protocol and the service's
// name are handed to it from the environment the harness sets. Only traces are exported
// (the service receives no logs).
//
// The model is Mastra's OpenAI-compatible model config (`{ id: "openai/...", url, api }`) on
// the scripted LLM: Chat Completions (its default), or the Responses API with
// CONFORMANCE_API=responses. CONFORMANCE_STREAM=1 runs `agent.stream` read to its end
// (`getFullOutput`) instead of `agent.generate`. A conversation keeps its history: the second message of `session` is
// sent after the first exchange's messages. The team is Mastra's supervisor agent: the
// lead has the engineer as a sub-agent (`agents: { release_engineer }`), which Mastra
// offers its model as a tool.

import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { createTool } from "@mastra/core/tools";
import { Observability } from "@mastra/observability";
import { OtelExporter } from "@mastra/otel-exporter";
import { z } from "zod";

import { push, run } from "./common.mjs";

const stream = process.env.CONFORMANCE_STREAM === "1";
const model = {
  id: "openai/fake-gpt",
  url: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY,
  api: process.env.CONFORMANCE_API === "responses" ? "responses" : "chat",
};

// A failing push throws (err-raise: Mastra hands the error to the model as the call's
// result) or returns an error object (err-object), per `push`.
const gitPush = createTool({
  id: "git_push",
  description: "Push a branch of a repository to its remote.",
  inputSchema: z.object({
    repo: z.string().describe("The repository, as owner/name."),
    branch: z.string().describe("The branch to push."),
  }),
  execute: async ({ repo, branch }) => push(repo, branch),
});

const engineer = new Agent({
  id: "release_engineer",
  name: "release_engineer",
  description: "Pushes branches of repositories.",
  instructions: "You are a release engineer. Use git_push to push branches.",
  model,
  tools: { git_push: gitPush },
});

const lead = new Agent({
  id: "release_lead",
  name: "release_lead",
  instructions: "You lead releases. Ask the release engineer to push branches.",
  model,
  agents: { release_engineer: engineer },
});

const mastra = new Mastra({
  agents: { release_engineer: engineer, release_lead: lead },
  observability: new Observability({
    configs: {
      otel: {
        serviceName: process.env.OTEL_SERVICE_NAME,
        exporters: [
          new OtelExporter({
            provider: {
              custom: {
                endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
                protocol: process.env.OTEL_EXPORTER_OTLP_PROTOCOL,
              },
            },
            signals: { logs: false },
          }),
        ],
      },
    },
  }),
});

async function conversation(name, texts) {
  const agent = mastra.getAgent(name.startsWith("team-") ? "release_lead" : "release_engineer");
  const history = [];
  for (const text of texts) {
    history.push({ role: "user", content: text });
    const result = stream
      ? await (await agent.stream(history, { maxSteps: 5 })).getFullOutput()
      : await agent.generate(history, { maxSteps: 5 });
    history.push(...result.response.messages);
  }
}

await run(conversation, {
  packages: ["@mastra/core", "@mastra/observability", "@mastra/otel-exporter"],
  flush: () => mastra.shutdown(),
  // Mastra has no tool-error type: whatever a tool throws is its failure (err-raise).
  supported: { "err-type": false },
});
