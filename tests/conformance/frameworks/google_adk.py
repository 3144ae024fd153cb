"""Google ADK: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp


def _adk(instrumentation: str, label: str) -> SetUp:
    return SetUp(
        id=f"google-adk.{instrumentation}",
        framework="Google ADK (LlmAgent on LiteLlm, InMemoryRunner)",
        instrumentation=label,
        program="google_adk_agent",
        env="google-adk" if instrumentation == "native" else "google-adk-openinference",
        packages=(
            ("google-adk", "litellm")
            if instrumentation == "native"
            else ("google-adk", "openinference-instrumentation-google-adk")
        ),
        agent="release_engineer",
        # LiteLLM's provider-prefixed name is the model ADK is given and records.
        model="openai/fake-gpt",
        team_agent="release_lead",
        extra_env={
            "CONFORMANCE_INSTRUMENTATION": instrumentation,
            # ADK (and the OTel GenAI convention) records no message content unless asked;
            # this is the standard switch that puts it on the spans.
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
        },
    )


SETUPS: tuple[SetUp, ...] = (
    _adk("native", "ADK's built-in OpenTelemetry tracing"),
    _adk("openinference", "OpenInference (openinference-instrumentation-google-adk)"),
)
