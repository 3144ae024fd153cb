"""The Vercel AI SDK (Node.js): its conformance set-ups."""

from __future__ import annotations

from ..registry import NODE_SDK_TRACES_ONLY, SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="vercel-ai.otel",
        framework="Vercel AI SDK (Node.js, generateText; the lead's tool runs a subagent)",
        instrumentation="its OpenTelemetry integration (@ai-sdk/otel) on the OTel Node SDK",
        program="vercel_ai",
        env="node",
        runtime="node",
        packages=("ai", "@ai-sdk/openai", "@ai-sdk/otel", "node"),
        agent="release_engineer",
        # The SDK has no tool-error type: whatever a tool's `execute` throws is the call's
        # `tool-error`, handed to the model (err-raise covers it).
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
        extra_env=NODE_SDK_TRACES_ONLY,
    ),
)
