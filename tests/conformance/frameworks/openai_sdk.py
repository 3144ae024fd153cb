"""The OpenAI SDK driven by a hand-written tool loop, with OpenLLMetry's instrumentation,
over each API shape the SDK has."""

from __future__ import annotations

from ..registry import SetUp


def _openai_loop(api: str, label: str) -> SetUp:
    return SetUp(
        id=f"openai-sdk-loop.{api}.openllmetry",
        framework=f"OpenAI SDK, hand-written tool loop ({label})",
        instrumentation="OpenLLMetry (opentelemetry-instrumentation-openai)",
        program="openai_loop",
        env="openllmetry",
        packages=("openai", "opentelemetry-instrumentation-openai"),
        agent="",
        # A hand-written loop has no tool-error type: it hands the exception's text over.
        failures=("err-raise", "err-object"),
        extra_env={"CONFORMANCE_API": api},
    )


SETUPS: tuple[SetUp, ...] = (
    _openai_loop("chat", "Chat Completions"),
    _openai_loop("chat-stream", "Chat Completions, streaming"),
    _openai_loop("responses", "Responses API"),
    _openai_loop("responses-stream", "Responses API, streaming"),
)
