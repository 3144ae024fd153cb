"""A hand-written OpenAI SDK tool loop traced with traceloop-sdk's decorators: each request
is a `@workflow`, the loop an `@agent(name="release_engineer")`, the git tool a
`@tool(name="git_push")`; `Traceloop.init` sends the spans (its OpenAI instrumentation's
among them) to the OTLP/HTTP exporter it is given, which reads
`OTEL_EXPORTER_OTLP_ENDPOINT`.

A failing tool is reported to the model the way such loops do: a raised exception leaves
the `@tool` span with it recorded and the loop hands its text over as the tool message; a
returned error object is the tool message itself. The team is a lead agent whose tool
`release_engineer` runs the worker agent and returns its report.
"""

from __future__ import annotations

import json
import os
from typing import Any

from tests.conformance.setups import _common

PUSH_SCHEMA = {
    "type": "object",
    "properties": {
        "repo": {"type": "string", "description": "owner/name"},
        "branch": {"type": "string"},
    },
    "required": ["repo", "branch"],
}
DELEGATE_SCHEMA = {
    "type": "object",
    "properties": {"request": {"type": "string", "description": "what to push"}},
    "required": ["request"],
}
SYSTEM = "You are a release engineer. Use git_push to push branches."
LEAD_SYSTEM = "You lead releases. Ask release_engineer to push branches."


def _tool(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": schema}}


def build(client: Any) -> Any:
    """The decorated agents, tools and workflow (decorated after `Traceloop.init`)."""
    from traceloop.sdk.decorators import agent, tool, workflow

    @tool(name="git_push")
    def git_push(repo: str, branch: str) -> dict[str, Any]:
        return _common.push(repo, branch)

    def loop(history: list[dict[str, Any]], tools: list[dict[str, Any]], run: Any) -> str:
        for _ in range(5):
            response = client.chat.completions.create(
                model="fake-gpt", messages=history, tools=tools
            )
            message = response.choices[0].message.model_dump(exclude_none=True)
            history.append(message)
            calls = message.get("tool_calls") or []
            if not calls:
                return str(message.get("content") or "")
            for call in calls:
                arguments = json.loads(call["function"]["arguments"])
                try:
                    output = json.dumps(run(call["function"]["name"], arguments))
                except _common.PushRejected as error:
                    output = f"Error: {error}"
                history.append({"role": "tool", "tool_call_id": call["id"], "content": output})
        return ""

    @agent(name="release_engineer")
    def release_engineer(history: list[dict[str, Any]]) -> str:
        return loop(history, [_tool("git_push", PUSH_SCHEMA)], lambda _, a: git_push(**a))

    @tool(name="release_engineer")
    def delegate(request: str) -> str:
        return str(release_engineer([{"role": "system", "content": SYSTEM}, _user(request)]))

    @agent(name="release_lead")
    def release_lead(history: list[dict[str, Any]]) -> str:
        tools = [_tool("release_engineer", DELEGATE_SCHEMA)]
        return loop(history, tools, lambda _, a: delegate(**a))

    @workflow(name="release_request")
    def handle(history: list[dict[str, Any]], team: bool) -> str:
        return str((release_lead if team else release_engineer)(history))

    return handle


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def main() -> None:
    from openai import OpenAI
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from traceloop.sdk import Traceloop
    from traceloop.sdk.instruments import Instruments

    Traceloop.init(
        app_name=os.environ["OTEL_SERVICE_NAME"],
        exporter=OTLPSpanExporter(),
        telemetry_enabled=False,
        instruments={Instruments.OPENAI},
    )
    handle = build(OpenAI())

    def conversation(case: str, messages: list[str]) -> None:
        team = case.startswith("team-")
        history: list[dict[str, Any]] = [
            {"role": "system", "content": LEAD_SYSTEM if team else SYSTEM}
        ]
        for text in messages:
            history.append(_user(text))
            handle(history, team)

    _common.run(
        conversation,
        packages=("traceloop-sdk", "openai", "opentelemetry-instrumentation-openai"),
        flush=trace.get_tracer_provider().force_flush,  # type: ignore[attr-defined]
    )


if __name__ == "__main__":
    main()
