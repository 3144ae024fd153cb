"""A LlamaIndex `FunctionAgent` instrumented by OpenInference
(`LlamaIndexInstrumentor().instrument(tracer_provider=...)`), as its README shows.

The model is `OpenAILike` on the scripted LLM (LlamaIndex's `OpenAI` refuses model names
OpenAI does not list). A failing push raises (the agent hands the exception's text to the
model as an error result) or returns the error object. The team is an `AgentWorkflow`
whose root agent `release_lead` hands off to `release_engineer`.

A conversation is one `Context` and one `Memory`, both given to every run: this
llama-index-core keeps no memory in a `Context` between runs (it drops the memory as an
unserializable key when the run ends), and a run given a memory starts from it.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.memory import Memory
from llama_index.core.workflow import Context
from llama_index.llms.openai_like import OpenAILike

from tests.conformance.setups import _common

SYSTEM = "You are a release engineer. Use git_push to push branches."
LEAD_SYSTEM = "You lead releases. Hand push requests to release_engineer."


def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push `branch` of the repository `repo` (owner/name) to its remote."""
    return _common.push(repo, branch)


def main() -> None:
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    provider = _common.tracer_provider()
    LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    llm = OpenAILike(
        model="fake-gpt",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        is_chat_model=True,
        is_function_calling_model=True,
    )

    def build(case: str) -> Any:
        engineer = FunctionAgent(
            name="release_engineer",
            description="Pushes branches of repositories.",
            system_prompt=SYSTEM,
            tools=[git_push],
            llm=llm,
        )
        if not case.startswith("team-"):
            return engineer
        lead = FunctionAgent(
            name="release_lead",
            description="Leads releases.",
            system_prompt=LEAD_SYSTEM,
            tools=[],
            llm=llm,
            can_handoff_to=["release_engineer"],
        )
        return AgentWorkflow(agents=[lead, engineer], root_agent="release_lead")

    async def converse(case: str, messages: list[str]) -> None:
        agent = build(case)
        ctx = Context(agent)
        memory = Memory.from_defaults(session_id=case)
        for text in messages:
            await agent.run(user_msg=text, ctx=ctx, memory=memory)

    def conversation(case: str, messages: list[str]) -> None:
        asyncio.run(converse(case, messages))

    _common.run(
        conversation,
        packages=(
            "llama-index-core",
            "llama-index-llms-openai-like",
            "openinference-instrumentation-llama-index",
            "opentelemetry-sdk",
        ),
        flush=provider.force_flush,
        # LlamaIndex documents no tool-error type: a tool raises, and the agent hands the
        # exception's text to the model as an error result.
        supported={"err-type": False},
    )


if __name__ == "__main__":
    main()
