"""The Vercel AI SDK (Node.js): its conformance set-ups."""

from __future__ import annotations

from ..registry import NODE_SDK_TRACES_ONLY, SetUp

_INTEGRATIONS = {
    "otel": "its OpenTelemetry integration (@ai-sdk/otel OpenTelemetry) on the OTel Node SDK",
    "legacy": "its legacy ai.* spans (@ai-sdk/otel LegacyOpenTelemetry) on the OTel Node SDK",
}


def _ai_sdk(integration: str, stream: bool = False) -> SetUp:
    call = "streamText" if stream else "generateText"
    extra_env = {**NODE_SDK_TRACES_ONLY, "CONFORMANCE_INSTRUMENTATION": integration}
    if stream:
        extra_env["CONFORMANCE_STREAM"] = "1"
    return SetUp(
        id=".".join(
            part for part in ("vercel-ai", "stream" if stream else "", integration) if part
        ),
        framework=f"Vercel AI SDK (Node.js, {call}; the lead's tool runs a subagent)",
        instrumentation=_INTEGRATIONS[integration],
        program="vercel_ai",
        env="node",
        runtime="node",
        packages=("ai", "@ai-sdk/openai", "@ai-sdk/otel", "node"),
        agent="release_engineer",
        # The SDK has no tool-error type: whatever a tool's `execute` throws is the call's
        # `tool-error`, handed to the model (err-raise covers it).
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
        extra_env=extra_env,
    )


SETUPS: tuple[SetUp, ...] = (
    _ai_sdk("otel"),
    _ai_sdk("legacy"),
    _ai_sdk("otel", stream=True),
    _ai_sdk("legacy", stream=True),
)
