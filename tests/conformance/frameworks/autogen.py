"""AutoGen AgentChat: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp


def _agentchat(instrumentation: str, label: str, packages: tuple[str, ...]) -> SetUp:
    return SetUp(
        id=f"autogen-agentchat.{instrumentation}",
        framework="AutoGen AgentChat (AssistantAgent; team: the worker as the lead's AgentTool)",
        instrumentation=label,
        program="autogen_agentchat",
        env="autogen",
        packages=("autogen-agentchat", *packages),
        agent="release_engineer",
        # AutoGen has no tool-error type: a raised exception becomes the tool's error
        # result (FunctionExecutionResult.is_error), a returned error object its value.
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
        extra_env={"CONFORMANCE_INSTRUMENTATION": instrumentation},
    )


SETUPS: tuple[SetUp, ...] = (
    _agentchat(
        "native",
        "AutoGen's own spans + OpenLLMetry (opentelemetry-instrumentation-openai)",
        ("opentelemetry-instrumentation-openai",),
    ),
    _agentchat(
        "openinference",
        "OpenInference (openinference-instrumentation-autogen-agentchat)",
        ("openinference-instrumentation-autogen-agentchat",),
    ),
)
