"""A smolagents agent instrumented by OpenInference
(`SmolagentsInstrumentor().instrument(tracer_provider=...)`), as its README shows.

`CONFORMANCE_AGENT` picks the agent: `toolcalling` (`ToolCallingAgent`, the model calls
tools through the API) or `code` (`CodeAgent`, the model writes code that calls them; its
model id contains `code`). The model is `OpenAIServerModel` on the scripted LLM. The
second request of a conversation runs with `reset=False`, so the agent keeps its memory.
A failing push raises (smolagents hands the error to the model as the step's observation)
or returns the error object. The team is a lead agent with the worker in `managed_agents`.
"""

from __future__ import annotations

import os
from typing import Any

from smolagents import CodeAgent, OpenAIServerModel, ToolCallingAgent, tool

from tests.conformance.setups import _common


@tool
def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push a branch of a repository to its remote.

    Args:
        repo: The repository, as owner/name.
        branch: The branch to push.
    """
    return _common.push(repo, branch)


def main() -> None:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    provider = _common.tracer_provider()
    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    code = os.environ.get("CONFORMANCE_AGENT", "toolcalling") == "code"
    model = OpenAIServerModel(
        model_id="fake-code" if code else "fake-gpt",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
    )
    kind = CodeAgent if code else ToolCallingAgent

    def build(case: str) -> Any:
        # Fresh agents per conversation: a conversation's memory is its own.
        engineer = kind(
            tools=[git_push],
            model=model,
            name="release_engineer",
            description="Pushes branches of repositories.",
            max_steps=5,
        )
        if not case.startswith("team-"):
            return engineer
        return kind(
            tools=[], model=model, name="release_lead", managed_agents=[engineer], max_steps=5
        )

    def conversation(case: str, messages: list[str]) -> None:
        agent = build(case)
        for index, text in enumerate(messages):
            agent.run(text, reset=index == 0)

    _common.run(
        conversation,
        packages=("smolagents", "openinference-instrumentation-smolagents", "opentelemetry-sdk"),
        flush=provider.force_flush,
    )


if __name__ == "__main__":
    main()
