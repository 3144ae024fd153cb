"""A Pydantic AI agent with its native OpenTelemetry spans, as its docs show for using
OpenTelemetry without Logfire: a global SDK TracerProvider and `Agent.instrument_all()`.

The model is `OpenAIChatModel` on an `OpenAIProvider` pointed at the scripted LLM. The
second request of a conversation passes `message_history=result.all_messages()`. A failing
push is `ToolFailed` (Pydantic AI's documented way to report a terminal tool failure to the
model) or the returned error object. The team is agent delegation: the lead's tool runs the
worker agent with `usage=ctx.usage`.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from tests.conformance.setups import _common

INSTRUCTIONS = "You are a release engineer. Use git_push to push branches."
LEAD_INSTRUCTIONS = "You lead releases. Ask release_engineer to push branches."


def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push `branch` of the repository `repo` (owner/name) to its remote."""
    if _common.failure_mode(repo) == "type":
        raise ToolFailed(_common.FAILURE_TEXT)
    return _common.push(repo, branch)


def main() -> None:
    provider = _common.tracer_provider()
    Agent.instrument_all()
    model = OpenAIChatModel(
        "fake-gpt",
        provider=OpenAIProvider(
            base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
        ),
    )

    engineer = Agent(model, name="release_engineer", instructions=INSTRUCTIONS, tools=[git_push])

    async def release_engineer(ctx: RunContext[None], request: str) -> str:
        """Hand a push request to the release engineer; returns its report."""
        result = await engineer.run(request, usage=ctx.usage)
        return str(result.output)

    lead = Agent(
        model, name="release_lead", instructions=LEAD_INSTRUCTIONS, tools=[release_engineer]
    )

    def conversation(case: str, messages: list[str]) -> None:
        agent = lead if case.startswith("team-") else engineer
        history: list[Any] | None = None
        for text in messages:
            result = agent.run_sync(text, message_history=history)
            history = result.all_messages()

    _common.run(
        conversation,
        packages=("pydantic-ai-slim", "opentelemetry-sdk"),
        flush=provider.force_flush,
    )


if __name__ == "__main__":
    main()
