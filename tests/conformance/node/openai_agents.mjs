// The OpenAI Agents SDK for JavaScript (`@openai/agents`): an `Agent` with a `tool`, run
// by `run`, traced by OpenInference's processor for it
// (`@arizeai/openinference-instrumentation-openai-agents`) as its README sets it up, with
// `manuallyInstrument(agents)` (the ESM way), which replaces the SDK's own trace
// processors, so nothing is uploaded to OpenAI. Its tracer provider is the global one of
// the OpenTelemetry Node SDK with the OTLP/HTTP (protobuf) exporter, which the environment
// alone configures (the README's bare `NodeTracerProvider` would not read the service's
// name from OTEL_SERVICE_NAME: the Node SDK's resource detectors do).
//
// The model is the SDK's default, the Responses API, on the client that reads
// OPENAI_BASE_URL. The two messages of a conversation share one `MemorySession`.
// CONFORMANCE_STREAM=1 runs every conversation streamed (`run(..., { stream: true })`).
// CONFORMANCE_TEAM picks the multi-agent variant: `handoff` (the lead hands the
// conversation to the engineer) or `tool` (the lead calls the engineer as a tool,
// `agent.asTool`).

import * as agents from "@openai/agents";
import { OpenAIAgentsInstrumentation } from "@arizeai/openinference-instrumentation-openai-agents";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { z } from "zod";

import { push, run } from "./common.mjs";

const sdk = new NodeSDK({ traceExporter: new OTLPTraceExporter() });
sdk.start();
new OpenAIAgentsInstrumentation().manuallyInstrument(agents);

const { Agent, MemorySession, getGlobalTraceProvider, tool } = agents;

const stream = process.env.CONFORMANCE_STREAM === "1";
const INSTRUCTIONS = "You are a release engineer. Use git_push to push branches.";
const LEAD_INSTRUCTIONS = "You lead releases. Hand pushes over to the release engineer.";

const gitPush = tool({
  name: "git_push",
  description: "Push a branch of a repository to its remote.",
  parameters: z.object({
    repo: z.string().describe("The repository, as owner/name."),
    branch: z.string().describe("The branch to push."),
  }),
  execute: async ({ repo, branch }) => push(repo, branch),
  // What the model is told when the tool throws. The SDK's default tells it only "An
  // error occurred while running the tool. Please try again."; its docs say to pass an
  // `errorFunction` to hand the error's details over, as this does.
  errorFunction: (_context, error) => `git_push failed: ${error?.message ?? error}`,
});

const engineer = new Agent({
  name: "release_engineer",
  instructions: INSTRUCTIONS,
  model: "fake-gpt",
  tools: [gitPush],
  handoffDescription: "Pushes branches of repositories.",
});

const lead =
  process.env.CONFORMANCE_TEAM === "tool"
    ? new Agent({
        name: "release_lead",
        instructions: LEAD_INSTRUCTIONS,
        model: "fake-gpt",
        tools: [
          engineer.asTool({
            toolName: "release_engineer",
            toolDescription: "Ask the release engineer to push a branch.",
          }),
        ],
      })
    : Agent.create({
        name: "release_lead",
        instructions: LEAD_INSTRUCTIONS,
        model: "fake-gpt",
        handoffs: [engineer],
      });

async function conversation(name, texts) {
  const agent = name.startsWith("team-") ? lead : engineer;
  const session = new MemorySession();
  for (const text of texts) {
    if (stream) {
      const result = await agents.run(agent, text, { session, stream: true });
      await result.completed;
    } else {
      await agents.run(agent, text, { session });
    }
  }
}

await run(conversation, {
  packages: [
    "@openai/agents",
    "@arizeai/openinference-instrumentation-openai-agents",
    "@opentelemetry/sdk-node",
  ],
  flush: async () => {
    await getGlobalTraceProvider().forceFlush();
    await sdk.shutdown();
  },
  // The SDK has no tool-error type: whatever a tool throws is its failure (err-raise).
  supported: { "err-type": false },
});
