"""The OpenAI Agents SDK with FactLedger's guard around its runs
(`factledger.guards.for_openai_agents.run` and `run_streamed`): an `Agent` with a
`@function_tool`, on the SDK's default model (the Responses API) at `OPENAI_BASE_URL`.

OpenInference's instrumentation replaces the SDK's own trace processors (nothing is
uploaded to OpenAI): the SDK's traces become OpenTelemetry spans, beside the guard's.
Modes (`GUARD_STREAM`): not streamed (`Runner.run`); `streamed`: each attempt through
`Runner.run_streamed`, its events drained. `GUARD_SESSION=1`: each case's run keeps its
conversation in a `SQLiteSession`, so a retry sends the nudge alone.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from agents import Agent, Runner, SQLiteSession, function_tool

from factledger.guards.for_openai_agents import run, run_streamed
from tests.conformance.setups import _common, _guarding

INSTRUCTIONS = "You are a release engineer. Use git_push to push branches."


@function_tool
def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push a branch of a repository to its remote.

    Args:
        repo: The repository, as owner/name.
        branch: The branch to push.
    """
    return _common.push(repo, branch)


def main() -> None:
    agent = Agent(
        name="release_engineer", instructions=INSTRUCTIONS, model="fake-gpt", tools=[git_push]
    )
    streamed = _guarding.stream_mode() == "streamed"
    loop = asyncio.new_event_loop()

    async def plain(text: str) -> str:
        if streamed:
            result = Runner.run_streamed(agent, text)
            async for _ in result.stream_events():
                pass
            return str(result.final_output)
        return str((await Runner.run(agent, text)).final_output)

    def conversation(case: str, text: str) -> str:
        options = _guarding.options(case)
        if os.environ.get("GUARD_SESSION") == "1":
            session = SQLiteSession(f"guard-{case}")
            kept = loop.run_until_complete(run(agent, text, guard=options, session=session))
            return str(kept.final_output)
        if not _guarding.guarded():
            return loop.run_until_complete(plain(text))
        if streamed:
            result: Any = loop.run_until_complete(run_streamed(agent, text, guard=options))
        else:
            result = loop.run_until_complete(run(agent, text, guard=options))
        return str(result.final_output)

    def instrument(provider: Any) -> None:
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)

    _guarding.run_guarded(
        conversation, packages=("openai-agents", "opentelemetry-sdk"), instrument=instrument
    )


if __name__ == "__main__":
    main()
