"""LangChain v1 `create_agent` with FactLedger's guard as middleware
(`factledger.guards.for_langchain.FactLedgerGuard`), `ChatOpenAI` on the scripted LLM
(Chat Completions), instrumented by OpenInference.

Modes (`GUARD_STREAM`): not streamed (`invoke`); `streamed`: `ChatOpenAI(streaming=True)`
and the graph run with `stream(stream_mode="values")`, the last state's last message read.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from factledger.guards.for_langchain import FactLedgerGuard
from tests.conformance.setups import _common, _guarding

SYSTEM = "You are a release engineer. Use git_push to push branches."


@tool
def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push `branch` of the repository `repo` (owner/name) to its remote."""
    return _common.push(repo, branch)


def main() -> None:
    streamed = _guarding.stream_mode() == "streamed"
    model = ChatOpenAI(model="fake-gpt", streaming=streamed)

    def conversation(case: str, text: str) -> str:
        agent = create_agent(
            model=model,
            tools=[git_push],
            system_prompt=SYSTEM,
            middleware=[FactLedgerGuard(**_guarding.options(case))] if _guarding.guarded() else [],
            name="release_engineer",
        )
        request = {"messages": [{"role": "user", "content": text}]}
        if streamed:
            states = list(agent.stream(request, stream_mode="values"))
            return str(states[-1]["messages"][-1].content)
        return str(agent.invoke(request)["messages"][-1].content)

    def instrument(provider: Any) -> None:
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=provider)

    _guarding.run_guarded(
        conversation, packages=("langchain", "langchain-core", "langgraph"), instrument=instrument
    )


if __name__ == "__main__":
    main()
