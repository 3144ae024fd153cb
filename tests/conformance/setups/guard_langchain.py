"""LangChain v1 `create_agent` with FactLedger's guard as middleware
(`factledger.guards.for_langchain.FactLedgerGuard`), `ChatOpenAI` on the scripted LLM
(Chat Completions), instrumented by OpenInference.

Modes (`GUARD_STREAM`): not streamed (`invoke`); `streamed`: `ChatOpenAI(streaming=True)`
and the graph run with `stream(stream_mode="values")`, the last state's last message read.
`GUARD_GRAPH=1`: a LangGraph `StateGraph` of its own instead (model, `ToolNode`, and the
guard as a node, `guard_node`, on the model's final answer).
"""

from __future__ import annotations

import os
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from factledger.guards.for_langchain import FactLedgerGuard, guard_node
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
        agent = graph(case) if os.environ.get("GUARD_GRAPH") == "1" else agent_for(case)
        request = {"messages": [{"role": "user", "content": text}]}
        if streamed:
            states = list(agent.stream(request, stream_mode="values"))
            return str(states[-1]["messages"][-1].content)
        return str(agent.invoke(request)["messages"][-1].content)

    def graph(case: str) -> Any:
        """A ReAct loop of one's own: model, tools, and the guard on the final answer."""
        bound = model.bind_tools([git_push])

        def call_model(state: MessagesState) -> dict[str, Any]:
            return {"messages": [bound.invoke([SystemMessage(SYSTEM), *state["messages"]])]}

        def route(state: MessagesState) -> str:
            last = state["messages"][-1]
            return "tools" if getattr(last, "tool_calls", None) else "guard"

        builder = StateGraph(MessagesState)
        builder.add_node("model", call_model)
        builder.add_node("tools", ToolNode([git_push]))
        if _guarding.guarded():
            node = guard_node(model_node="model", **_guarding.options(case))
            builder.add_node("guard", node, destinations=("model", END))
        else:
            builder.add_node("guard", lambda state: {})
        builder.add_edge(START, "model")
        builder.add_conditional_edges("model", route, ["tools", "guard"])
        builder.add_edge("tools", "model")
        return builder.compile()

    def agent_for(case: str) -> Any:
        return create_agent(
            model=model,
            tools=[git_push],
            system_prompt=SYSTEM,
            middleware=[FactLedgerGuard(**_guarding.options(case))] if _guarding.guarded() else [],
            name="release_engineer",
        )

    def instrument(provider: Any) -> None:
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=provider)

    _guarding.run_guarded(
        conversation, packages=("langchain", "langchain-core", "langgraph"), instrument=instrument
    )


if __name__ == "__main__":
    main()
