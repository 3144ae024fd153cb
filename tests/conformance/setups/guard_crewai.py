"""CrewAI with FactLedger's guard as the task's guardrail
(`factledger.guards.for_crewai.guard`), `LLM(model="openai/fake-gpt")` on the scripted
LLM, instrumented by OpenInference (CrewAI and the OpenAI SDK it calls).

One agent `release_engineer` with the `git_push` tool, one task (the user's request as
its description), a sequential crew. Modes (`GUARD_STREAM`): not streamed
(`Crew.kickoff()`); `streamed`: the model's answers streamed (`LLM(stream=True)`) and
the crew too (`Crew(stream=True)`: its chunks iterated, then `.result`); `async`:
`Crew.akickoff()`, CrewAI's native async path (its tasks' `aexecute_task` and async
guardrail loop; `kickoff_async` is `kickoff` in a thread). The final output is the
crew's `raw`. `GUARD_AGENT=reused`: one agent for every case, which first runs a task
of its own unguarded (`acme/clean`), so its executor exists before the guard does.
`GUARD_AGENT=kickoff`: no crew, the agent alone (`Agent.kickoff(request)`, guarded by
`guard_agent`), its output's `raw`.

CrewAI's anonymous usage telemetry is switched off with `CREWAI_DISABLE_TELEMETRY` (not
`OTEL_SDK_DISABLED`, which would switch off the in-memory exporter too).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import LLM, Agent, Crew, Process, Task
from crewai.tools import tool

from factledger.guards.for_crewai import guard, guard_agent
from tests.conformance.setups import _common, _guarding

EXPECTED_OUTPUT = "What was pushed, with the new head commit."


@tool("git_push")
def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push `branch` of `repo` to its remote and report the new head commit."""
    return _common.push(repo, branch)


def main() -> None:
    mode = _guarding.stream_mode()
    llm = LLM(
        model="openai/fake-gpt",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        stream=mode == "streamed",
    )

    def engineer_agent() -> Agent:
        return Agent(
            role="release_engineer",
            goal="Push branches of repositories and report the new head commit.",
            backstory="You run releases with git_push.",
            tools=[git_push],
            llm=llm,
            allow_delegation=False,
        )

    reused = engineer_agent() if os.environ.get("GUARD_AGENT") == "reused" else None
    if reused is not None:
        warm_up = Task(
            description="Push branch main of acme/clean.",
            expected_output=EXPECTED_OUTPUT,
            agent=reused,
        )
        Crew(agents=[reused], tasks=[warm_up]).kickoff()

    def conversation(case: str, text: str) -> str:
        engineer = reused or engineer_agent()
        if os.environ.get("GUARD_AGENT") == "kickoff":
            if _guarding.guarded():
                guard_agent(engineer, **_guarding.options(case))
            return str(engineer.kickoff(text).raw)
        task = Task(description=text, expected_output=EXPECTED_OUTPUT, agent=engineer)
        if _guarding.guarded():
            guard(task, **_guarding.options(case))
        crew = Crew(
            agents=[engineer], tasks=[task], process=Process.sequential, stream=mode == "streamed"
        )
        if mode == "async":
            return str(asyncio.run(crew.akickoff()).raw)
        if mode == "streamed":
            streaming = crew.kickoff()
            for _ in streaming:
                pass
            return str(streaming.result.raw)
        return str(crew.kickoff().raw)

    def instrument(provider: Any) -> None:
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor

        CrewAIInstrumentor().instrument(tracer_provider=provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)

    _guarding.run_guarded(
        conversation,
        packages=("crewai", "openinference-instrumentation-crewai", "opentelemetry-sdk"),
        instrument=instrument,
    )


if __name__ == "__main__":
    main()
