"""CrewAI: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp


def _crew(
    instrumentation: str,
    label: str,
    packages: tuple[str, ...],
    unnamed_agent: dict[str, str] | None = None,
) -> SetUp:
    return SetUp(
        id=f"crewai.{instrumentation}",
        framework="CrewAI (a crew with one task; two turns: Agent.kickoff with the history; "
        "team: a hierarchical crew's manager)",
        instrumentation=label,
        program="crewai_crew",
        env="crewai",
        packages=("crewai", *packages),
        agent="release_engineer",
        # CrewAI has no tool-error type: a raised exception reaches the model as its
        # "Error executing tool: ..." text, a returned error object as the tool's value.
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
        extra_env={"CONFORMANCE_INSTRUMENTATION": instrumentation},
        unnamed_agent=unnamed_agent or {},
    )


SETUPS: tuple[SetUp, ...] = (
    _crew(
        "openinference",
        "OpenInference (openinference-instrumentation-crewai + -openai)",
        ("openinference-instrumentation-crewai", "openinference-instrumentation-openai"),
    ),
    _crew(
        "openllmetry",
        "OpenLLMetry (opentelemetry-instrumentation-crewai + -openai)",
        ("opentelemetry-instrumentation-crewai", "opentelemetry-instrumentation-openai"),
        # Its CrewAI instrumentation wraps Crew.kickoff, Agent.execute_task, Task.execute_sync
        # and LLM.call, not Agent.kickoff: a conversation's spans name no agent.
        {"session": "OpenLLMetry does not trace Agent.kickoff"},
    ),
)
