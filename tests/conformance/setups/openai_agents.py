"""The OpenAI Agents SDK (`openai-agents`): an `Agent` with a `@function_tool`, run by
`Runner`, instrumented by the instrumentation `CONFORMANCE_INSTRUMENTATION` names:

- `openinference`: `OpenAIAgentsInstrumentor().instrument(tracer_provider=...)`, which
  replaces the SDK's own trace processors (its default), so nothing is uploaded to OpenAI;
- `openllmetry`: `OpenAIAgentsInstrumentor(replace_existing_processors=True).instrument()`,
  the constructor option its docstring gives for sending traces to this backend alone.

The model is the SDK's default, the Responses API, on the client that reads
`OPENAI_BASE_URL`. `CONFORMANCE_STREAM=1` runs every conversation with
`Runner.run_streamed` instead of `Runner.run`. `CONFORMANCE_TEAM` picks the multi-agent
variant: `handoff` (the lead hands the conversation to the engineer) or `tool` (the lead
calls the engineer as a tool, `Agent.as_tool`). The two messages of a conversation share
one `SQLiteSession`.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from tests.conformance.setups import _common

INSTRUCTIONS = "You are a release engineer. Use git_push to push branches."
LEAD_INSTRUCTIONS = "You lead releases. Hand pushes over to the release engineer."


def tool_error(context: Any, error: Exception) -> str:
    """What the model is told when the tool raises. The SDK's default failure function
    tells it only "An error occurred while running the tool. Please try again." and keeps
    the exception out of the trace as well; its docstring says to pass a custom one to
    hand the error's details over, as this does."""
    return f"git_push failed: {error}"


def build_agents(team: str) -> tuple[Any, Any]:
    """The single agent and the team's lead, built with the SDK's own API."""
    from agents import Agent, function_tool

    @function_tool(failure_error_function=tool_error)
    def git_push(repo: str, branch: str) -> dict[str, Any]:
        """Push a branch of a repository to its remote.

        Args:
            repo: The repository, as owner/name.
            branch: The branch to push.
        """
        return _common.push(repo, branch)

    engineer = Agent(
        name="release_engineer",
        instructions=INSTRUCTIONS,
        model="fake-gpt",
        tools=[git_push],
        handoff_description="Pushes branches of repositories.",
    )
    if team == "tool":
        lead = Agent(
            name="release_lead",
            instructions=LEAD_INSTRUCTIONS,
            model="fake-gpt",
            tools=[
                engineer.as_tool(
                    tool_name="release_engineer",
                    tool_description="Ask the release engineer to push a branch.",
                )
            ],
        )
    else:
        lead = Agent(
            name="release_lead",
            instructions=LEAD_INSTRUCTIONS,
            model="fake-gpt",
            handoffs=[engineer],
        )
    return engineer, lead


def instrument(instrumentation: str, provider: Any) -> None:
    if instrumentation == "openinference":
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    elif instrumentation == "openllmetry":
        from opentelemetry.instrumentation.openai_agents import (
            OpenAIAgentsInstrumentor as TraceloopInstrumentor,
        )

        TraceloopInstrumentor(replace_existing_processors=True).instrument()
    else:
        raise ValueError(f"unknown CONFORMANCE_INSTRUMENTATION {instrumentation!r}")


async def run_once(agent: Any, text: str, session: Any, stream: bool) -> str:
    from agents import Runner

    if stream:
        result = Runner.run_streamed(agent, text, session=session)
        async for _ in result.stream_events():
            pass
        return str(result.final_output)
    done = await Runner.run(agent, text, session=session)
    return str(done.final_output)


def main() -> None:
    instrumentation = os.environ.get("CONFORMANCE_INSTRUMENTATION", "openinference")
    stream = os.environ.get("CONFORMANCE_STREAM") == "1"
    provider = _common.tracer_provider()
    instrument(instrumentation, provider)

    from agents import SQLiteSession

    engineer, lead = build_agents(os.environ.get("CONFORMANCE_TEAM", "handoff"))
    # One event loop for every conversation: the SDK's default client keeps its
    # connections, which belong to the loop that opened them.
    loop = asyncio.new_event_loop()

    def conversation(case: str, messages: list[str]) -> None:
        agent = lead if case.startswith("team-") else engineer
        session = SQLiteSession(f"conformance-{case}")

        async def talk() -> None:
            for text in messages:
                await run_once(agent, text, session, stream)

        loop.run_until_complete(talk())

    packages = ["openai-agents", "opentelemetry-sdk"]
    packages.append(
        "openinference-instrumentation-openai-agents"
        if instrumentation == "openinference"
        else "opentelemetry-instrumentation-openai-agents"
    )

    def flush() -> None:
        from agents import flush_traces

        flush_traces()
        provider.force_flush()

    _common.run(conversation, packages=packages, flush=flush, supported={"err-type": False})


if __name__ == "__main__":
    main()
