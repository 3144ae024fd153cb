"""The OpenAI Agents SDK for JavaScript (Node.js): its conformance set-ups."""

from __future__ import annotations

from ..registry import NODE_SDK_TRACES_ONLY, SetUp


def _agents(team: str, stream: bool = False) -> SetUp:
    how = "the engineer as the lead's tool" if team == "tool" else "a handoff to the engineer"
    extra_env = {**NODE_SDK_TRACES_ONLY, "CONFORMANCE_TEAM": team}
    if stream:
        how = f"streamed, {how}"
        extra_env["CONFORMANCE_STREAM"] = "1"
    return SetUp(
        id=".".join(part for part in ("openai-agents-js", "stream" if stream else "", team) if part)
        + ".openinference",
        framework=f"OpenAI Agents SDK for JavaScript (Node.js, Responses API, {how})",
        instrumentation="OpenInference (@arizeai/openinference-instrumentation-openai-agents)",
        program="openai_agents",
        env="node",
        runtime="node",
        packages=(
            "@openai/agents",
            "@arizeai/openinference-instrumentation-openai-agents",
            "node",
        ),
        agent="release_engineer",
        # The SDK has no tool-error type: whatever a tool's `execute` throws is a tool
        # failure, handed to the model by the tool's `errorFunction` (err-raise covers it).
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
        extra_env=extra_env,
    )


SETUPS: tuple[SetUp, ...] = (
    _agents("handoff"),
    _agents("tool"),
    _agents("handoff", stream=True),
    _agents("tool", stream=True),
)
