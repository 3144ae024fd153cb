"""smolagents: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp


def _smolagents(agent: str, label: str, model: str) -> SetUp:
    return SetUp(
        id=f"smolagents-{agent}.openinference",
        framework=f"smolagents {label} (team: managed_agents)",
        instrumentation="OpenInference (openinference-instrumentation-smolagents)",
        program="smolagents_agent",
        env="smolagents",
        packages=("smolagents", "openinference-instrumentation-smolagents"),
        agent="release_engineer",
        model=model,
        # smolagents has no tool-error type of its own: a tool raises, and the agent hands
        # the error to the model as the step's observation.
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
        extra_env={"CONFORMANCE_AGENT": agent},
    )


SETUPS: tuple[SetUp, ...] = (
    _smolagents("toolcalling", "ToolCallingAgent", "fake-gpt"),
    _smolagents("code", "CodeAgent", "fake-code"),
)
