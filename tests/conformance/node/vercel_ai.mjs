// The Vercel AI SDK (`ai` 7 with `@ai-sdk/openai`): `generateText` with a `git_push` tool
// and `stopWhen: isStepCount(n)`, traced as its telemetry docs say: the OpenTelemetry Node
// SDK with the OTLP/HTTP (protobuf) exporter, configured by the environment alone, and the
// AI SDK's OpenTelemetry integration (`@ai-sdk/otel`) registered once at start-up (since
// AI SDK 7 the spans come from that package; `telemetry.functionId` names each call).
// CONFORMANCE_INSTRUMENTATION picks its integration: `otel` (`OpenTelemetry`, the GenAI
// semantic conventions, recommended) or `legacy` (`LegacyOpenTelemetry`, the AI SDK's own
// `ai.*` spans of earlier versions). CONFORMANCE_STREAM=1 runs `streamText` instead.
//
// The model is the provider's default API for `openai(...)`, the Responses API, on the
// scripted LLM (`createOpenAI({ baseURL })`). A conversation keeps its history: the second
// message of `session` is sent after the first exchange's `responseMessages`. The team
// is the docs' subagent pattern: the lead's tool `release_engineer` runs the engineer's
// own `generateText` and returns its text.

import { LegacyOpenTelemetry, OpenTelemetry } from "@ai-sdk/otel";
import { createOpenAI } from "@ai-sdk/openai";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { generateText, isStepCount, registerTelemetry, streamText, tool } from "ai";
import { z } from "zod";

import { push, run } from "./common.mjs";

const sdk = new NodeSDK({ traceExporter: new OTLPTraceExporter() });
sdk.start();
registerTelemetry(
  process.env.CONFORMANCE_INSTRUMENTATION === "legacy"
    ? new LegacyOpenTelemetry()
    : new OpenTelemetry({ agentSpanName: "functionId" }),
);
const stream = process.env.CONFORMANCE_STREAM === "1";

const openai = createOpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY,
});
const model = openai("fake-gpt");

const INSTRUCTIONS = "You are a release engineer. Use git_push to push branches.";
const LEAD_INSTRUCTIONS = "You lead releases. Ask the release engineer to push branches.";

// A failing push throws (err-raise: the SDK hands the error to the model as the call's
// `tool-error` result) or returns an error object (err-object), per `push`.
const gitPush = tool({
  description: "Push a branch of a repository to its remote.",
  inputSchema: z.object({
    repo: z.string().describe("The repository, as owner/name."),
    branch: z.string().describe("The branch to push."),
  }),
  execute: async ({ repo, branch }) => push(repo, branch),
});

/** `generateText`, or `streamText` read to its end: either way the finished result. */
async function generate(options) {
  if (!stream) return generateText(options);
  const result = streamText(options);
  await result.consumeStream();
  return { text: await result.text, responseMessages: await result.responseMessages };
}

async function engineer(messages) {
  return generate({
    model,
    system: INSTRUCTIONS,
    messages,
    tools: { git_push: gitPush },
    stopWhen: isStepCount(5),
    telemetry: { functionId: "release_engineer" },
  });
}

const releaseEngineer = tool({
  description: "Ask the release engineer to push a branch.",
  inputSchema: z.object({ task: z.string().describe("What to push, and where.") }),
  execute: async ({ task }) => (await engineer([{ role: "user", content: task }])).text,
});

async function lead(messages) {
  return generate({
    model,
    system: LEAD_INSTRUCTIONS,
    messages,
    tools: { release_engineer: releaseEngineer },
    stopWhen: isStepCount(5),
    telemetry: { functionId: "release_lead" },
  });
}

async function conversation(name, texts) {
  const agent = name.startsWith("team-") ? lead : engineer;
  const history = [];
  for (const text of texts) {
    history.push({ role: "user", content: text });
    const result = await agent(history);
    history.push(...result.responseMessages);
  }
}

await run(conversation, {
  packages: ["ai", "@ai-sdk/openai", "@ai-sdk/otel", "@opentelemetry/sdk-node"],
  flush: () => sdk.shutdown(),
  // The SDK has no tool-error type: whatever a tool throws is its failure (err-raise).
  supported: { "err-type": false },
});
