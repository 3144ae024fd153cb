"""The Vercel AI SDK (Node.js): its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

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
        # The Node SDK also exports metrics and logs unless told not to; the service
        # receives traces only, so this set-up turns the others off as a user would.
        extra_env={"OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"},
    ),
)
