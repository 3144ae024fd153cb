"""LangChain create_agent and the LangGraph prebuilt ReAct agent: its conformance set-ups.

One program (`setups/langchain_agents.py`) serves them all; the environment picks the
agent, the instrumentation and how ChatOpenAI talks to the model, so between them the
set-ups cover Chat Completions, streaming and the Responses API.
"""

from __future__ import annotations

from ..registry import SetUp

_AGENTS = {
    "create-agent": ("langchain-create-agent", "LangChain create_agent", ("langchain",)),
    "react": (
        "langgraph-react",
        "LangGraph prebuilt ReAct agent (create_react_agent)",
        ("langgraph", "langgraph-supervisor"),
    ),
}
_INSTRUMENTATIONS = {
    "openinference": (
        "OpenInference (openinference-instrumentation-langchain)",
        "openinference-instrumentation-langchain",
    ),
    "openllmetry": (
        "OpenLLMetry (opentelemetry-instrumentation-langchain)",
        "opentelemetry-instrumentation-langchain",
    ),
}
_APIS = {
    "chat": "Chat Completions",
    "chat-stream": "Chat Completions, streaming",
    "responses": "Responses API",
}


def _setup(agent: str, instrumentation: str, api: str) -> SetUp:
    prefix, framework, packages = _AGENTS[agent]
    label, package = _INSTRUMENTATIONS[instrumentation]
    return SetUp(
        id=f"{prefix}.{instrumentation}",
        framework=f"{framework} ({_APIS[api]})",
        instrumentation=label,
        program="langchain_agents",
        env="langchain",
        packages=(*packages, "langchain-openai", package),
        agent="release_engineer",
        team_agent="release_lead",
        extra_env={
            "CONFORMANCE_AGENT": agent,
            "CONFORMANCE_INSTRUMENTATION": instrumentation,
            "CONFORMANCE_API": api,
        },
    )


SETUPS: tuple[SetUp, ...] = (
    _setup("create-agent", "openinference", "chat"),
    _setup("create-agent", "openllmetry", "responses"),
    _setup("react", "openinference", "chat-stream"),
    _setup("react", "openllmetry", "chat"),
)
