"""Every shape of the secret corpus is redacted however it is wrapped: as it is, JSON-
encoded once to five times, inside a GenAI message and inside a Python repr; every near
miss beside it comes through unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from factledger.collector.redaction import Redactor
from tests.unit.secret_corpus import SHAPES, SecretShape

DEFAULT = Redactor.default()


def _encoded(times: int) -> Callable[[str], str]:
    def wrap(text: str) -> str:
        for _ in range(times):
            text = json.dumps(text)
        return text

    return wrap


def _in_message(text: str) -> str:
    # A tool's answer in the next LLM call's input, as `gen_ai.input.messages` carries it:
    # the result string inside the message JSON.
    return json.dumps(
        [
            {"role": "user", "parts": [{"type": "text", "content": "check the service"}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "response": text}]},
        ]
    )


def _in_message_of_a_json_result(text: str) -> str:
    return _in_message(json.dumps({"status": 200, "body": json.dumps({"output": text})}))


WRAPPINGS: dict[str, Callable[[str], str]] = {
    "plain": _encoded(0),
    "json-once": _encoded(1),
    "json-twice": _encoded(2),
    "json-three-times": _encoded(3),
    "json-five-times": _encoded(5),
    "genai-message": _in_message,
    "genai-message-of-a-json-body": _in_message_of_a_json_result,
    "python-repr": repr,
    "python-repr-of-a-dict": lambda text: repr({"stdout": text, "code": 0}),
}


@pytest.mark.parametrize("wrap", WRAPPINGS.values(), ids=WRAPPINGS.keys())
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{s.family}: {s.name}" for s in SHAPES])
def test_every_shape_is_redacted_however_wrapped(
    shape: SecretShape, wrap: Callable[[str], str]
) -> None:
    stored = DEFAULT.text(wrap(shape.text))
    leaked = [part for part in shape.secret if part in stored]
    assert not leaked, stored
    assert "[REDACTED:" in stored


@pytest.mark.parametrize("wrap", WRAPPINGS.values(), ids=WRAPPINGS.keys())
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{s.family}: {s.name}" for s in SHAPES])
def test_the_near_miss_beside_each_shape_is_left_alone(
    shape: SecretShape, wrap: Callable[[str], str]
) -> None:
    text = wrap(shape.negative)
    assert DEFAULT.text(text) == text


def test_the_corpus_covers_every_family() -> None:
    families = {shape.family for shape in SHAPES}
    assert len(SHAPES) >= 100
    assert {
        "aws",
        "gcp",
        "azure",
        "github",
        "gitlab",
        "slack",
        "stripe",
        "twilio",
        "sendgrid",
        "mailgun",
        "npm",
        "pypi",
        "docker",
        "heroku",
        "shopify",
        "jwt",
        "private key",
        "url",
        "generic",
        "cli",
        "files",
        "kubernetes",
    } <= families
