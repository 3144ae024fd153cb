"""A hand-written tool loop on the OpenAI SDK, instrumented by OpenLLMetry's OpenAI
instrumentation (`OpenAIInstrumentor().instrument()`), as its README shows.

`CONFORMANCE_API` picks the API: `chat` (Chat Completions), `chat-stream`, `responses`
(the Responses API) or `responses-stream`. A failing tool is reported to the model the way
such loops do: the exception's text, or the returned error object, as the tool message.
"""

from __future__ import annotations

import json
import os
from typing import Any

from tests.conformance.setups import _common

TOOL_SCHEMA = {
    "type": "object",
    "properties": {
        "repo": {"type": "string", "description": "owner/name"},
        "branch": {"type": "string"},
    },
    "required": ["repo", "branch"],
}
SYSTEM = "You are a release engineer. Use git_push to push branches."


def git_push(repo: str, branch: str) -> str:
    """Push `branch` of `repo`; the tool's text result (the loop's error text on failure)."""
    try:
        return json.dumps(_common.push(repo, branch))
    except _common.PushRejected as error:
        return f"Error: {error}"


def chat_turn(client: Any, history: list[dict[str, Any]], stream: bool) -> None:
    tools = [{"type": "function", "function": {"name": "git_push", "parameters": TOOL_SCHEMA}}]
    for _ in range(5):
        if stream:
            message = _streamed_chat(client, history, tools)
        else:
            response = client.chat.completions.create(
                model="fake-gpt", messages=history, tools=tools
            )
            message = response.choices[0].message.model_dump(exclude_none=True)
        history.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            return
        for call in calls:
            arguments = json.loads(call["function"]["arguments"])
            history.append(
                {"role": "tool", "tool_call_id": call["id"], "content": git_push(**arguments)}
            )


def _streamed_chat(
    client: Any, history: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> dict[str, Any]:
    text = ""
    calls: dict[int, dict[str, Any]] = {}
    stream = client.chat.completions.create(
        model="fake-gpt",
        messages=history,
        tools=tools,
        stream=True,
        stream_options={"include_usage": True},
    )
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        text += delta.content or ""
        for part in delta.tool_calls or []:
            call = calls.setdefault(
                part.index,
                {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
            )
            call["id"] = part.id or call["id"]
            if part.function is not None:
                call["function"]["name"] += part.function.name or ""
                call["function"]["arguments"] += part.function.arguments or ""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


def responses_turn(client: Any, items: list[dict[str, Any]], stream: bool) -> None:
    tools = [{"type": "function", "name": "git_push", "parameters": TOOL_SCHEMA}]
    for _ in range(5):
        if stream:
            with client.responses.stream(
                model="fake-gpt", instructions=SYSTEM, input=items, tools=tools
            ) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(
                model="fake-gpt", instructions=SYSTEM, input=items, tools=tools
            )
        calls = [item for item in response.output if item.type == "function_call"]
        for item in response.output:
            items.append(item.model_dump(exclude_none=True))
        if not calls:
            return
        for call in calls:
            output = git_push(**json.loads(call.arguments))
            items.append(
                {"type": "function_call_output", "call_id": call.call_id, "output": output}
            )


def main() -> None:
    from openai import OpenAI
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    provider = _common.tracer_provider()
    OpenAIInstrumentor().instrument()
    client = OpenAI()
    api = os.environ.get("CONFORMANCE_API", "chat")

    def conversation(case: str, messages: list[str]) -> None:
        if api.startswith("chat"):
            history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
            for text in messages:
                history.append({"role": "user", "content": text})
                chat_turn(client, history, stream=api.endswith("stream"))
        else:
            items: list[dict[str, Any]] = []
            for text in messages:
                items.append({"role": "user", "content": text})
                responses_turn(client, items, stream=api.endswith("stream"))

    _common.run(
        conversation,
        packages=("openai", "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
        flush=provider.force_flush,
    )


if __name__ == "__main__":
    main()
