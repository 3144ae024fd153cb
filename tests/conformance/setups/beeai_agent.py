"""A BeeAI Framework `RequirementAgent` (the agent BeeAI's README builds on) instrumented by
OpenInference (`BeeAIInstrumentor().instrument()`), as its README shows.

The model is `OpenAIChatModel` on the scripted LLM (it reads `OPENAI_API_BASE` and
`OPENAI_API_KEY`); told that the endpoint supports `tool_choice: "required"`, as OpenAI's
does (BeeAI assumes an endpoint at a custom base URL does not, and then asks for tool
calls as JSON text instead of offering the tools). The agent keeps an
`UnconstrainedMemory`, so the second request of a conversation sees the first. A failing
push raises a plain exception or BeeAI's own `ToolError` (BeeAI hands either to the model
as the tool's error text), or returns the error object. The team is a lead
`RequirementAgent` that reaches the worker through a `HandoffTool`, as the README's
multi-agent example does.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.conformance.setups import _common

PACKAGES = ("beeai-framework", "openinference-instrumentation-beeai", "opentelemetry-sdk")


def main() -> None:
    from beeai_framework.adapters.openai import OpenAIChatModel
    from beeai_framework.agents.requirement import RequirementAgent
    from beeai_framework.memory import UnconstrainedMemory
    from beeai_framework.tools import StringToolOutput, ToolError, tool
    from beeai_framework.tools.handoff import HandoffTool
    from openinference.instrumentation.beeai import BeeAIInstrumentor

    provider = _common.tracer_provider()
    BeeAIInstrumentor().instrument()

    @tool
    def git_push(repo: str, branch: str) -> StringToolOutput:
        """Push a branch of a repository to its remote.

        Args:
            repo: The repository, as owner/name.
            branch: The branch to push.
        """
        if _common.failure_mode(repo) == "type":
            raise ToolError(_common.FAILURE_TEXT)
        return StringToolOutput(json.dumps(_common.push(repo, branch)))

    def model() -> Any:
        return OpenAIChatModel(
            "fake-gpt", tool_choice_support={"required", "none", "single", "auto"}
        )

    def build(case: str) -> Any:
        # Fresh agents per conversation: a conversation's memory is its own.
        engineer = RequirementAgent(
            name="release_engineer",
            description="Pushes branches of repositories.",
            llm=model(),
            tools=[git_push],
            memory=UnconstrainedMemory(),
            instructions="You are a release engineer. Use git_push to push branches.",
        )
        if not case.startswith("team-"):
            return engineer
        return RequirementAgent(
            name="release_lead",
            llm=model(),
            tools=[
                HandoffTool(
                    engineer,
                    name="release_engineer",
                    description="Ask the release engineer to push a branch.",
                )
            ],
            memory=UnconstrainedMemory(),
            instructions="You lead releases: hand pushes to the release engineer.",
        )

    async def talk(case: str, messages: list[str]) -> None:
        agent = build(case)
        for text in messages:
            await agent.run(text)

    def conversation(case: str, messages: list[str]) -> None:
        asyncio.run(talk(case, messages))

    _common.run(conversation, packages=PACKAGES, flush=provider.force_flush)


if __name__ == "__main__":
    main()
