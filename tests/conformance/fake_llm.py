"""A scripted OpenAI-compatible LLM server on loopback: Chat Completions and the Responses
API, plain and streaming (server-sent events), with tool calls.

What it answers is decided by `policy.decide` from the request alone (a delegation's
chat-message arguments filled in by `with_message_arguments`). Every request and answer
is kept (`exchanges`) so a test can say what the model was asked and said.
A tool offered under a plugin-qualified name (Semantic Kernel's `Git-git_push`: plugin,
hyphen, function) is shown to the policy by its function's name and called by the name
it was offered under, as a model reads and calls it (`by_function_name`).
Like the real Responses API, it stores each response's conversation: a request that
continues one by `previous_response_id` is read with that conversation before its own
input.
`FakeLlm` runs the server on a daemon thread: `with FakeLlm() as llm: llm.base_url`.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from . import dspy_adapter_answers
from .policy import GIT_TOOL, Answer, Message, Request, ToolCallAnswer, decide

_IDS = itertools.count(1)


@dataclass(frozen=True)
class Exchange:
    api: str
    """`chat` or `responses`."""
    request: Request
    answer: Answer
    stream: bool


class FakeLlm:
    """The server. `base_url` ends in `/v1`, as OpenAI clients expect."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self._conversations: dict[str, tuple[Message, ...]] = {}
        self._lock = threading.Lock()
        owner = self

        class Handler(_Handler):
            llm = owner

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)

    def conversation(self, response_id: Any) -> tuple[Message, ...]:
        """The messages a stored response ended (none for an unknown or absent id)."""
        with self._lock:
            return self._conversations.get(str(response_id or ""), ())

    def store(self, response_id: str, request: Request, item: Mapping[str, Any]) -> None:
        """Keep the conversation `response_id` ends: the request's messages (instructions
        are not carried over, as in the real API) and the answer's output item."""
        if item["type"] == "function_call":
            said = Message("assistant", calls=((str(item["call_id"]), str(item["name"])),))
        else:
            said = Message("assistant", str(item["content"][0]["text"]))
        kept = (*(m for m in request.messages if m.role != "system"), said)
        with self._lock:
            self._conversations[response_id] = kept

    def __enter__(self) -> FakeLlm:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


class _QuietServer(ThreadingHTTPServer):
    """Clients that drop a kept-alive connection at exit are no error worth a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    llm: FakeLlm
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # the test output stays quiet
        return

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json({"object": "list", "data": [{"id": "fake-gpt", "object": "model"}]})
        else:
            self._json({"error": {"message": f"no route {self.path}"}}, status=404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/chat/completions"):
            if dspy_adapter_answers.is_dspy_request(body):
                # DSPy asks for its own fields in text: the same decision, written so.
                request, _, text = dspy_adapter_answers.answer(body)
                answer = Answer(text=text)
            else:
                request, qualified = by_function_name(chat_request(body))
                answer = qualified(
                    with_message_arguments(request, fitted(decide(request), request))
                )
            stream = bool(body.get("stream"))
            self.llm.record(Exchange("chat", request, answer, stream))
            if stream:
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self._events((None, chunk) for chunk in chat_chunks(request.model, answer, usage))
            else:
                self._json(chat_completion(request.model, answer))
        elif path.endswith("/responses"):
            earlier = self.llm.conversation(body.get("previous_response_id"))
            request, qualified = by_function_name(responses_request(body, earlier))
            answer = qualified(with_message_arguments(request, fitted(decide(request), request)))
            stream = bool(body.get("stream"))
            self.llm.record(Exchange("responses", request, answer, stream))
            item = _output_item(answer)
            response_id = f"resp_{next(_IDS):08d}"
            self.llm.store(response_id, request, item)
            if stream:
                self._events(response_events(request.model, answer, item, response_id))
            else:
                self._json(response_object(request.model, answer, item, response_id=response_id))
        else:
            self._json({"error": {"message": f"no route {self.path}"}}, status=404)

    def _json(self, payload: Mapping[str, Any], status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _events(self, events: Iterator[tuple[str | None, Mapping[str, Any]]]) -> None:
        """Server-sent events; Chat Completions ends with `[DONE]`, Responses does not."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        chat = True
        for event, payload in events:
            if event is not None:
                chat = False
                self.wfile.write(f"event: {event}\n".encode())
            self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        if chat:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


# --- requests -----------------------------------------------------------------------


def fitted(answer: Answer, request: Request) -> Answer:
    """The answer with a call's lone argument renamed to the one the offered tool requires,
    when the tool has a single required argument and the call names another (BeeAI's
    `final_answer` takes `response` where smolagents' takes `answer`). Every other answer
    is returned as the policy gave it."""
    call = answer.call
    schema = request.tools.get(call.name) if call is not None else None
    if call is None or schema is None or len(call.arguments) != 1:
        return answer
    required = schema.get("required") or []
    properties = schema.get("properties") or {}
    [(given, value)] = call.arguments.items()
    if len(required) != 1 or given in properties or required[0] == given:
        return answer
    return replace(answer, call=replace(call, arguments={required[0]: value}))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
            for part in content
        )
    return "" if content is None else str(content)


def _role(role: Any) -> str:
    return "system" if role in ("system", "developer") else str(role or "user")


_QUALIFIED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)-([A-Za-z_][A-Za-z0-9_]*)")


def by_function_name(request: Request) -> tuple[Request, Callable[[Answer], Answer]]:
    """The request with plugin-qualified tool names (`Git-git_push`) as their function's
    name (`git_push`), where no other offered tool has that name, and what turns an answer
    calling a function back into a call of the name it was offered under."""
    names: dict[str, str] = {}
    for offered in request.tools:
        match = _QUALIFIED.fullmatch(offered)
        if match and match.group(2) not in request.tools:
            names[offered] = match.group(2)
    if not names or len(set(names.values())) != len(names):
        return request, lambda answer: answer
    offered_as = {bare: offered for offered, bare in names.items()}

    def bare(name: str) -> str:
        return names.get(name, name)

    def qualified(answer: Answer) -> Answer:
        if answer.call is None or answer.call.name not in offered_as:
            return answer
        return replace(answer, call=replace(answer.call, name=offered_as[answer.call.name]))

    messages = tuple(
        replace(m, calls=tuple((call_id, bare(name)) for call_id, name in m.calls))
        for m in request.messages
    )
    return (
        replace(
            request,
            messages=messages,
            tools={bare(k): v for k, v in request.tools.items()},
            descriptions={bare(k): v for k, v in request.descriptions.items()},
        ),
        qualified,
    )


def chat_request(body: Mapping[str, Any]) -> Request:
    """A Chat Completions body as the policy sees it."""
    messages = []
    for m in body.get("messages") or []:
        calls = tuple(
            (str(c.get("id", "")), str((c.get("function") or {}).get("name", "")))
            for c in m.get("tool_calls") or []
        )
        messages.append(
            Message(
                role=_role(m.get("role")),
                text=_text(m.get("content")),
                calls=calls,
                answers=str(m.get("tool_call_id") or ""),
            )
        )
    functions = [
        t["function"]
        for t in body.get("tools") or []
        if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)
    ]
    tools = {str(f["name"]): f.get("parameters") or {} for f in functions}
    descriptions = {
        str(f["name"]): str(f["description"]) for f in functions if f.get("description")
    }
    return Request(str(body.get("model", "")), tuple(messages), tools, descriptions)


def responses_request(body: Mapping[str, Any], earlier: tuple[Message, ...] = ()) -> Request:
    """A Responses API body as the policy sees it, after `earlier`: the conversation of
    the response it continues (`previous_response_id`)."""
    messages = []
    if body.get("instructions"):
        messages.append(Message("system", _text(body["instructions"])))
    messages.extend(earlier)
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in items or []:
        kind = item.get("type", "message")
        if kind == "function_call":
            call = (str(item.get("call_id", "")), str(item.get("name", "")))
            messages.append(Message("assistant", calls=(call,)))
        elif kind == "function_call_output":
            messages.append(
                Message("tool", _text(item.get("output")), answers=str(item.get("call_id", "")))
            )
        elif kind == "message" or "role" in item:
            messages.append(Message(_role(item.get("role")), _text(item.get("content"))))
    functions = [
        t for t in body.get("tools") or [] if isinstance(t, Mapping) and t.get("type") == "function"
    ]
    tools = {str(f["name"]): f.get("parameters") or {} for f in functions}
    descriptions = {
        str(f["name"]): str(f["description"]) for f in functions if f.get("description")
    }
    return Request(str(body.get("model", "")), tuple(messages), tools, descriptions)


def with_message_arguments(request: Request, answer: Answer) -> Answer:
    """`answer`, with every required argument of its delegation that takes a list of chat
    messages (`[{"role", "content"}]`, as Haystack's `AgentTool` takes the task it hands
    on) given the user's last request as its one user message: the policy fills string
    arguments only. Any other answer as decided."""
    call = answer.call
    if call is None or call.name == GIT_TOOL or call.name not in request.tools:
        return answer
    schema = request.tools[call.name]
    properties = schema.get("properties") or {}
    missing = [
        name
        for name in schema.get("required") or ()
        if name not in call.arguments and _takes_messages(properties.get(name))
    ]
    request_text = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
    if not missing or not request_text:
        return answer
    filled = {name: [{"role": "user", "content": request_text}] for name in missing}
    return Answer(call=ToolCallAnswer(call.name, {**call.arguments, **filled}))


def _takes_messages(spec: Any) -> bool:
    if not isinstance(spec, Mapping) or spec.get("type") != "array":
        return False
    items = spec.get("items")
    required = items.get("required") if isinstance(items, Mapping) else None
    return isinstance(required, list) and {"role", "content"} <= set(required)


# --- Chat Completions answers ---------------------------------------------------------


def _usage() -> dict[str, int]:
    return {"prompt_tokens": 42, "completion_tokens": 17, "total_tokens": 59}


def chat_completion(model: str, answer: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.call is not None:
        message["tool_calls"] = [
            {
                "id": f"call_{next(_IDS):08d}",
                "type": "function",
                "function": {
                    "name": answer.call.name,
                    "arguments": json.dumps(answer.call.arguments),
                },
            }
        ]
    return {
        "id": f"chatcmpl-{next(_IDS)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if answer.call else "stop",
                "logprobs": None,
            }
        ],
        "usage": _usage(),
    }


def chat_chunks(model: str, answer: Answer, usage: bool) -> Iterator[dict[str, Any]]:
    base = {
        "id": f"chatcmpl-{next(_IDS)}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": dict(delta), "finish_reason": finish, "logprobs": None}
        return {**base, "choices": [choice]}

    yield chunk({"role": "assistant", "content": ""})
    if answer.call is not None:
        arguments = json.dumps(answer.call.arguments)
        head = {
            "index": 0,
            "id": f"call_{next(_IDS):08d}",
            "type": "function",
            "function": {"name": answer.call.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        for piece in _pieces(arguments):
            yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls")
    else:
        for piece in _pieces(answer.text):
            yield chunk({"content": piece})
        yield chunk({}, "stop")
    if usage:
        yield {**base, "choices": [], "usage": _usage()}


def _pieces(text: str, size: int = 16) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


# --- Responses API answers ------------------------------------------------------------


def _output_item(answer: Answer) -> dict[str, Any]:
    n = next(_IDS)
    if answer.call is not None:
        return {
            "type": "function_call",
            "id": f"fc_{n:08d}",
            "call_id": f"call_{n:08d}",
            "name": answer.call.name,
            "arguments": json.dumps(answer.call.arguments),
            "status": "completed",
        }
    return {
        "type": "message",
        "id": f"msg_{n:08d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
    }


def response_object(
    model: str,
    answer: Answer,
    item: Mapping[str, Any] | None = None,
    status: str = "completed",
    response_id: str = "",
) -> dict[str, Any]:
    output = [] if status != "completed" else [dict(item or _output_item(answer))]
    return {
        "id": response_id or f"resp_{next(_IDS):08d}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
        "usage": {
            "input_tokens": 42,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 17,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 59,
        },
    }


def response_events(
    model: str, answer: Answer, item: Mapping[str, Any], response_id: str
) -> Iterator[tuple[str | None, dict[str, Any]]]:
    sequence = itertools.count()
    created = response_object(model, answer, status="in_progress", response_id=response_id)

    def event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
        return kind, {"type": kind, "sequence_number": next(sequence), **fields}

    yield event("response.created", response=created)
    yield event("response.in_progress", response=created)
    if item["type"] == "function_call":
        yield event("response.output_item.added", output_index=0, item={**item, "arguments": ""})
        for piece in _pieces(item["arguments"]):
            yield event(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=0,
                delta=piece,
            )
        yield event(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=0,
            arguments=item["arguments"],
        )
    else:
        text = answer.text
        empty = {"type": "output_text", "text": "", "annotations": []}
        yield event("response.output_item.added", output_index=0, item={**item, "content": []})
        yield event(
            "response.content_part.added",
            item_id=item["id"],
            output_index=0,
            content_index=0,
            part=empty,
        )
        for piece in _pieces(text):
            yield event(
                "response.output_text.delta",
                item_id=item["id"],
                output_index=0,
                content_index=0,
                delta=piece,
                logprobs=[],
            )
        yield event(
            "response.output_text.done",
            item_id=item["id"],
            output_index=0,
            content_index=0,
            text=text,
            logprobs=[],
        )
        yield event(
            "response.content_part.done",
            item_id=item["id"],
            output_index=0,
            content_index=0,
            part={**empty, "text": text},
        )
    yield event("response.output_item.done", output_index=0, item=item)
    completed = response_object(model, answer, item, response_id=response_id)
    yield event("response.completed", response=completed)
