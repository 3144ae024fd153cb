"""A Pydantic AI agent with FactLedger's guard as its output validator
(`factledger.guards.for_pydantic_ai.guard`), on `OpenAIChatModel` pointed at the scripted LLM.

Modes (`GUARD_STREAM`): not streamed (`run_sync`); `events`: `run()` with an
`event_stream_handler`, so every model request streams and output retries still happen;
`run_stream`: `Agent.run_stream()`, which does not retry a validator, so the guard runs
with `max_nudges=0` (footnote only).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterable
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from factledger.guards.for_pydantic_ai import guard
from tests.conformance.setups import _common, _guarding

INSTRUCTIONS = "You are a release engineer. Use git_push to push branches."


def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push `branch` of the repository `repo` (owner/name) to its remote."""
    return _common.push(repo, branch)


def main() -> None:
    model = OpenAIChatModel(
        "fake-gpt",
        provider=OpenAIProvider(
            base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
        ),
    )
    Agent.instrument_all()
    mode = _guarding.stream_mode()

    def agent_for(case: str) -> Agent[None, str]:
        options = _guarding.options(case)
        if mode == "run_stream":
            options["max_nudges"] = 0
        agent = Agent(
            model,
            name="release_engineer",
            instructions=INSTRUCTIONS,
            tools=[git_push],
            retries={"output": _guarding.MAX_NUDGES},
        )
        return guard(agent, **options) if _guarding.guarded() else agent

    async def drain(ctx: RunContext[None], events: AsyncIterable[Any]) -> None:
        async for _ in events:
            pass

    async def streamed(agent: Agent[None, str], text: str) -> str:
        if mode == "events":
            return str((await agent.run(text, event_stream_handler=drain)).output)
        async with agent.run_stream(text) as result:
            return str(await result.get_output())

    def conversation(case: str, text: str) -> str:
        agent = agent_for(case)
        if mode:
            return asyncio.run(streamed(agent, text))
        return str(agent.run_sync(text).output)

    _guarding.run_guarded(conversation, packages=("pydantic-ai-slim", "opentelemetry-sdk"))


if __name__ == "__main__":
    main()
