"""Semantic Kernel: a `ChatCompletionAgent` named `release_engineer` with a `git_push`
kernel function, on `OpenAIChatCompletion` pointed at the scripted LLM.

Telemetry is set up as Semantic Kernel's observability guide does it: the
`SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true` environment
variable (set by the registry's `extra_env`), a global TracerProvider and LoggerProvider
with the OTLP/HTTP span and log exporters, and a `LoggingHandler` on the root logger
filtered to `semantic_kernel`. SK then writes spans (`invoke_agent release_engineer` with
`gen_ai.input.messages` / `gen_ai.output.messages`, `chat fake-gpt`, `execute_tool
Git-git_push`) and writes each prompt message and completion as a log record of its chat
span (`event.name` `gen_ai.system.message` / `gen_ai.user.message` /
`gen_ai.assistant.message` / `gen_ai.tool.message` / `gen_ai.choice`, the message as
JSON text in the body).

A conversation is one `ChatHistoryAgentThread`: the second request sees the first's
messages and tool calls. A failing push raises a plain exception (SK's auto function
invocation hands its text to the model as the function's result) or returns the error
object; SK documents no tool-error type of its own.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Annotated, Any

from tests.conformance.setups import _common

INSTRUCTIONS = "You are a release engineer. Use git_push to push branches."


def _telemetry() -> tuple[Any, Any]:
    """The TracerProvider and LoggerProvider, as SK's telemetry sample sets them up (over
    OTLP/HTTP, configured by `OTEL_EXPORTER_OTLP_ENDPOINT` alone)."""
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

    tracer_provider = _common.tracer_provider()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    set_logger_provider(logger_provider)
    handler = LoggingHandler()
    handler.addFilter(logging.Filter("semantic_kernel"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return tracer_provider, logger_provider


def main() -> None:
    tracer_provider, logger_provider = _telemetry()

    # Imported after the providers are set: SK's tracers come from the global provider.
    from openai import AsyncOpenAI
    from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.functions import kernel_function

    class Git:
        """Git operations on the user's repositories."""

        @kernel_function(description="Push a branch of a repository to its remote.")
        def git_push(
            self,
            repo: Annotated[str, "The repository, as owner/name."],
            branch: Annotated[str, "The branch to push."],
        ) -> dict[str, Any]:
            return _common.push(repo, branch)

    def build() -> Any:
        service = OpenAIChatCompletion(
            ai_model_id="fake-gpt",
            async_client=AsyncOpenAI(
                base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
            ),
        )
        return ChatCompletionAgent(
            service=service, name="release_engineer", instructions=INSTRUCTIONS, plugins=[Git()]
        )

    async def converse(messages: list[str]) -> None:
        agent = build()
        thread: ChatHistoryAgentThread | None = None
        for text in messages:
            response = await agent.get_response(messages=text, thread=thread)
            thread = response.thread

    def conversation(case: str, messages: list[str]) -> None:
        asyncio.run(converse(messages))

    def flush() -> None:
        tracer_provider.force_flush()
        logger_provider.force_flush()

    _common.run(
        conversation,
        packages=("semantic-kernel", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"),
        flush=flush,
    )


if __name__ == "__main__":
    main()
