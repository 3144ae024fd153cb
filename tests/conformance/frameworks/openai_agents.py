"""The OpenAI Agents SDK: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

_INSTRUMENTATIONS = {
    "openinference": (
        "OpenInference (openinference-instrumentation-openai-agents)",
        "openinference-instrumentation-openai-agents",
    ),
    "openllmetry": (
        "OpenLLMetry (opentelemetry-instrumentation-openai-agents)",
        "opentelemetry-instrumentation-openai-agents",
    ),
}


def _agents(instrumentation: str, variant: str = "") -> SetUp:
    label, package = _INSTRUMENTATIONS[instrumentation]
    framework = "OpenAI Agents SDK (Responses API"
    extra_env = {"CONFORMANCE_INSTRUMENTATION": instrumentation}
    if variant == "stream":
        framework += ", Runner.run_streamed"
        extra_env["CONFORMANCE_STREAM"] = "1"
    if variant == "as-tool":
        framework += ", the engineer as the lead's tool"
        extra_env["CONFORMANCE_TEAM"] = "tool"
    else:
        framework += ", a handoff to the engineer"
    return SetUp(
        id=".".join(part for part in ("openai-agents", variant, instrumentation) if part),
        framework=framework + ")",
        instrumentation=label,
        program="openai_agents",
        env=f"openai-agents-{instrumentation}",
        packages=("openai-agents", package),
        agent="release_engineer",
        # The SDK has no tool-error type: any exception a tool raises is a tool failure,
        # handed to the model by the tool's failure_error_function (err-raise covers it).
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
        extra_env=extra_env,
    )


SETUPS: tuple[SetUp, ...] = (
    _agents("openinference"),
    _agents("openllmetry"),
    _agents("openinference", "stream"),
    _agents("openllmetry", "stream"),
    _agents("openinference", "as-tool"),
    _agents("openllmetry", "as-tool"),
)
