"""Microsoft Agent Framework (`agent-framework-core`, `agent-framework-openai`): an `Agent`
with a `@tool` function on the OpenAI Responses client (`OpenAIChatClient`, which reads
`OPENAI_BASE_URL`), traced by the framework's own instrumentation.

Its observability docs, for an application that configures OpenTelemetry itself: set the
global tracer provider, then `enable_instrumentation(enable_sensitive_data=True)` so the
spans carry messages, tool arguments and results. The exporter is the standard OTLP/HTTP
one (`_common.tracer_provider()`).

A tool that raises is handed to the model as "Error: Function failed." unless the client's
`function_invocation_configuration["include_detailed_errors"]` is set, which its docstring
gives for telling the model what went wrong: set here, as a user whose model must explain
a failure would. The framework's tool-error type is `ToolExecutionException` ("a tool or
prompt call failed at runtime"). The two messages of a conversation share one
`AgentSession` (`agent.create_session()`), which carries the Responses API's
`previous_response_id` from one run to the next. The multi-agent cases give the request
to a lead whose one tool is the engineer (`Agent.as_tool`).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from tests.conformance.setups import _common

INSTRUCTIONS = "You are a release engineer. Use git_push to push branches."
LEAD_INSTRUCTIONS = "You lead releases. Ask the release engineer to push branches."


def build_agents() -> tuple[Any, Any]:
    """The engineer, and the lead that has the engineer as its tool."""
    from agent_framework import Agent, tool
    from agent_framework.exceptions import ToolExecutionException
    from agent_framework.openai import OpenAIChatClient

    @tool
    def git_push(
        repo: Annotated[str, "The repository, as owner/name."],
        branch: Annotated[str, "The branch to push."],
    ) -> dict[str, Any]:
        """Push a branch of a repository to its remote."""
        if _common.failure_mode(repo) == "type":
            raise ToolExecutionException(_common.FAILURE_TEXT)
        return _common.push(repo, branch)

    client = OpenAIChatClient(
        model="fake-gpt",
        function_invocation_configuration={"include_detailed_errors": True},
    )
    engineer = Agent(
        client=client,
        name="release_engineer",
        description="Pushes branches of repositories.",
        instructions=INSTRUCTIONS,
        tools=[git_push],
    )
    lead = Agent(
        client=client,
        name="release_lead",
        instructions=LEAD_INSTRUCTIONS,
        tools=[engineer.as_tool(description="Ask the release engineer to push a branch.")],
    )
    return engineer, lead


def main() -> None:
    provider = _common.tracer_provider()
    from agent_framework.observability import enable_instrumentation

    enable_instrumentation(enable_sensitive_data=True)
    engineer, lead = build_agents()
    # One event loop for every conversation: the client keeps its connections, which
    # belong to the loop that opened them.
    loop = asyncio.new_event_loop()

    def conversation(case: str, messages: list[str]) -> None:
        agent = lead if case.startswith("team-") else engineer
        session = agent.create_session()

        async def talk() -> None:
            for text in messages:
                await agent.run(text, session=session)

        loop.run_until_complete(talk())

    _common.run(
        conversation,
        packages=["agent-framework-core", "agent-framework-openai", "opentelemetry-sdk"],
        flush=provider.force_flush,
    )


if __name__ == "__main__":
    main()
