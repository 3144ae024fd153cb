"""LangChain v1 `create_agent` and LangGraph's prebuilt `create_react_agent`, instrumented
by OpenInference (`LangChainInstrumentor().instrument(tracer_provider=...)`) or OpenLLMetry
(`LangchainInstrumentor().instrument()`), as their READMEs show.

- `CONFORMANCE_AGENT`: `create-agent` or `react`.
- `CONFORMANCE_INSTRUMENTATION`: `openinference` or `openllmetry`.
- `CONFORMANCE_API`: how `ChatOpenAI` talks to the model: `chat` (Chat Completions, the
  graph run with `.invoke`), `chat-stream` (`streaming=True`, the graph run with
  `.stream(stream_mode="values")`) or `responses` (`use_responses_api=True`).

Tool failures the way each documents them: the tool raises LangChain's `ToolException`
with `handle_tool_error=True` (the tool hands the error text back, status "error"); a
plain exception is turned into a message to the model by the agent (create_agent: a
`wrap_tool_call` middleware, as LangChain's agents guide writes it; the ReAct agent: a
`ToolNode` with `handle_tool_errors=True`); or the tool returns the error object.
A conversation of two requests is one thread (`InMemorySaver`, one `thread_id`).
The team: a lead `release_lead` without the git tool. create_agent's lead calls the
worker agent through a tool that invokes it (LangChain's sub-agents as tools); the ReAct
lead is a `langgraph-supervisor` supervisor handing off to the worker.
"""

from __future__ import annotations

import os
from typing import Any

from tests.conformance.setups import _common

SYSTEM = "You are a release engineer. Use git_push to push branches."
LEAD_SYSTEM = "You lead releases. Ask the release engineer to do any push."


def _instrument(instrumentation: str, provider: Any) -> None:
    if instrumentation == "openinference":
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=provider)
    else:
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        LangchainInstrumentor().instrument()


def _model(api: str) -> Any:
    from langchain_openai import ChatOpenAI

    if api == "responses":
        return ChatOpenAI(model="fake-gpt", use_responses_api=True)
    return ChatOpenAI(model="fake-gpt", streaming=api == "chat-stream")


def _git_tool() -> Any:
    from langchain_core.tools import StructuredTool, ToolException

    def git_push(repo: str, branch: str) -> dict[str, Any]:
        """Push `branch` of the repository `repo` (owner/name) to its remote."""
        if _common.failure_mode(repo) == "type":
            raise ToolException(_common.FAILURE_TEXT)
        return _common.push(repo, branch)

    return StructuredTool.from_function(git_push, handle_tool_error=True)


def _create_agent(model: Any, checkpointer: Any) -> tuple[Any, Any]:
    """The single agent and the team's lead, with LangChain v1's `create_agent`."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import wrap_tool_call
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool

    @wrap_tool_call
    def handle_tool_errors(request: Any, handler: Any) -> Any:
        """Hand a failing tool's error to the model instead of ending the run."""
        try:
            return handler(request)
        except Exception as error:
            return ToolMessage(
                content=f"Tool error: Please check your input and try again. ({error})",
                tool_call_id=request.tool_call["id"],
            )

    def engineer(saver: Any) -> Any:
        return create_agent(
            model=model,
            tools=[_git_tool()],
            system_prompt=SYSTEM,
            middleware=[handle_tool_errors],
            checkpointer=saver,
            name="release_engineer",
        )

    worker = engineer(None)

    @tool
    def release_engineer(request: str) -> str:
        """Ask the release engineer, who can push branches, to carry out `request`."""
        result = worker.invoke({"messages": [{"role": "user", "content": request}]})
        return str(result["messages"][-1].content)

    lead = create_agent(
        model=model,
        tools=[release_engineer],
        system_prompt=LEAD_SYSTEM,
        checkpointer=checkpointer,
        name="release_lead",
    )
    return engineer(checkpointer), lead


def _react_agent(model: Any, checkpointer: Any) -> tuple[Any, Any]:
    """The single agent and the team's supervisor, with LangGraph's prebuilt agent."""
    from langgraph.prebuilt import ToolNode, create_react_agent
    from langgraph_supervisor import create_supervisor

    def engineer(saver: Any) -> Any:
        return create_react_agent(
            model,
            ToolNode([_git_tool()], handle_tool_errors=True),
            prompt=SYSTEM,
            checkpointer=saver,
            name="release_engineer",
        )

    lead = create_supervisor(
        [engineer(None)],
        model=model,
        prompt=LEAD_SYSTEM,
        supervisor_name="release_lead",
    ).compile(checkpointer=checkpointer, name="release_lead")
    return engineer(checkpointer), lead


def main() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    instrumentation = os.environ.get("CONFORMANCE_INSTRUMENTATION", "openinference")
    kind = os.environ.get("CONFORMANCE_AGENT", "create-agent")
    api = os.environ.get("CONFORMANCE_API", "chat")
    provider = _common.tracer_provider()
    _instrument(instrumentation, provider)
    build = _create_agent if kind == "create-agent" else _react_agent
    single, team = build(_model(api), InMemorySaver())

    def conversation(case: str, messages: list[str]) -> None:
        agent = team if case.startswith("team-") else single
        config = {"configurable": {"thread_id": case}}
        for text in messages:
            request = {"messages": [{"role": "user", "content": text}]}
            if api == "chat-stream":
                for _ in agent.stream(request, config, stream_mode="values"):
                    pass
            else:
                agent.invoke(request, config)

    packages = ["langchain", "langchain-core", "langchain-openai", "langgraph"]
    if kind == "react":
        packages.append("langgraph-supervisor")
    packages.append(
        "openinference-instrumentation-langchain"
        if instrumentation == "openinference"
        else "opentelemetry-instrumentation-langchain"
    )
    _common.run(conversation, packages=packages, flush=provider.force_flush)


if __name__ == "__main__":
    main()
