"""CrewAI: an agent with the role `release_engineer` and a `git_push` tool, one task (the
user's request as its description) and a crew, on `LLM(model="openai/fake-gpt")` pointed
at the scripted LLM.

`CONFORMANCE_INSTRUMENTATION` picks the instrumentation, each with the OpenAI
instrumentation of the same project for the model calls (CrewAI calls OpenAI-compatible
servers through the OpenAI SDK):
- `openinference`: OpenInference's `CrewAIInstrumentor` and `OpenAIInstrumentor`;
- `openllmetry`: OpenLLMetry's `CrewAIInstrumentor` and `OpenAIInstrumentor`.

A tool that raises is handed to the model as CrewAI's `Error executing tool: ...` text; a
returned error object is the tool's value. CrewAI has no tool-error type of its own.
A crew runs its tasks once, with no conversation: the two requests of one conversation are
two `Agent.kickoff` calls of the agent, the second given the messages of the first
(`LiteAgentOutput.messages`) before its request, as CrewAI carries a conversation. The
team: a hierarchical crew whose manager `release_lead` (no tools of its own) delegates the
task to `release_engineer` with CrewAI's delegation tool.

CrewAI's anonymous usage telemetry is switched off with `CREWAI_DISABLE_TELEMETRY` (not
`OTEL_SDK_DISABLED`, which would switch off this program's own exporter too).
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from tests.conformance.setups import _common

EXPECTED_OUTPUT = "What was pushed, with the new head commit."


def _llm() -> Any:
    from crewai import LLM

    return LLM(
        model="openai/fake-gpt",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
    )


def _git_push_tool() -> Any:
    from crewai.tools import tool

    @tool("git_push")
    def git_push(repo: str, branch: str) -> dict[str, Any]:
        """Push `branch` of `repo` to its remote and report the new head commit."""
        return _common.push(repo, branch)

    return git_push


def _engineer() -> Any:
    from crewai import Agent

    return Agent(
        role="release_engineer",
        goal="Push branches of repositories and report the new head commit.",
        backstory="You run releases with git_push.",
        tools=[_git_push_tool()],
        llm=_llm(),
        allow_delegation=False,
    )


def _crew(request: str) -> Any:
    from crewai import Crew, Process, Task

    engineer = _engineer()
    task = Task(description=request, expected_output=EXPECTED_OUTPUT, agent=engineer)
    return Crew(agents=[engineer], tasks=[task], process=Process.sequential)


def _team(request: str) -> Any:
    from crewai import Agent, Crew, Process, Task

    lead = Agent(
        role="release_lead",
        goal="Get branches pushed by your release engineer and report the new head commit.",
        backstory="You lead releases; your release engineer does every push.",
        llm=_llm(),
        allow_delegation=True,
    )
    task = Task(description=request, expected_output=EXPECTED_OUTPUT)
    return Crew(
        agents=[_engineer()], tasks=[task], process=Process.hierarchical, manager_agent=lead
    )


def _conversation(messages: list[str]) -> None:
    engineer = _engineer()
    history: list[dict[str, Any]] = []
    for text in messages:
        output = engineer.kickoff([*history, {"role": "user", "content": text}])
        history = [m for m in output.messages if m.get("role") != "system"]


def _instrument(provider: Any) -> tuple[str, ...]:
    """Install the chosen instrumentation; the distributions whose versions count."""
    if os.environ.get("CONFORMANCE_INSTRUMENTATION", "openinference") == "openllmetry":
        from opentelemetry.instrumentation.crewai import CrewAIInstrumentor
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        CrewAIInstrumentor().instrument()
        OpenAIInstrumentor().instrument()
        return ("opentelemetry-instrumentation-crewai", "opentelemetry-instrumentation-openai")
    from openinference.instrumentation.crewai import CrewAIInstrumentor as OICrewAIInstrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor as OIOpenAIInstrumentor

    OICrewAIInstrumentor().instrument(tracer_provider=provider)
    OIOpenAIInstrumentor().instrument(tracer_provider=provider)
    return ("openinference-instrumentation-crewai", "openinference-instrumentation-openai")


def main() -> None:
    provider = _common.tracer_provider()
    instrumentation = _instrument(provider)

    def conversation(case: str, messages: list[str]) -> None:
        if len(messages) > 1:
            _conversation(messages)
        elif case.startswith("team-"):
            _team(messages[0]).kickoff()
        else:
            _crew(messages[0]).kickoff()

    _common.run(
        conversation,
        packages=("crewai", *instrumentation, "opentelemetry-sdk"),
        flush=provider.force_flush,
        supported={"err-type": False},
    )


if __name__ == "__main__":
    main()
