"""smolagents with FactLedger's guard as a final-answer check
(`factledger.guards.for_smolagents.guard`), `OpenAIServerModel` on the scripted LLM.

`CONFORMANCE_AGENT` picks the agent: `toolcalling` (`ToolCallingAgent`) or `code`
(`CodeAgent`; its model id contains `code`, so the scripted LLM answers in code). Modes
(`GUARD_STREAM`): not streamed (`run()`); `streamed`: `run(stream=True)` with the model's
output streamed (`stream_outputs=True`), the final answer read from the last step.
OpenInference's instrumentation makes the agent's spans, where the guard records.
"""

from __future__ import annotations

import os
from typing import Any

from smolagents import CodeAgent, OpenAIServerModel, ToolCallingAgent, tool
from smolagents.memory import FinalAnswerStep

from factledger.guards.for_smolagents import guard
from tests.conformance.setups import _common, _guarding


@tool
def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push a branch of a repository to its remote.

    Args:
        repo: The repository, as owner/name.
        branch: The branch to push.
    """
    return _common.push(repo, branch)


def main() -> None:
    code = os.environ.get("CONFORMANCE_AGENT", "toolcalling") == "code"
    streamed = _guarding.stream_mode() == "streamed"
    model = OpenAIServerModel(
        model_id="fake-code" if code else "fake-gpt",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
    )
    kind = CodeAgent if code else ToolCallingAgent

    def conversation(case: str, text: str) -> str:
        agent = kind(
            tools=[git_push],
            model=model,
            name="release_engineer",
            max_steps=2 + _guarding.MAX_NUDGES,
            stream_outputs=streamed,
            verbosity_level=0,
        )
        if _guarding.guarded():
            guard(agent, **_guarding.options(case))
        if not streamed:
            return str(agent.run(text))
        steps = list(agent.run(text, stream=True))
        final = steps[-1]
        assert isinstance(final, FinalAnswerStep)
        return str(final.output)

    def instrument(provider: Any) -> None:
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor

        SmolagentsInstrumentor().instrument(tracer_provider=provider)

    _guarding.run_guarded(
        conversation, packages=("smolagents", "opentelemetry-sdk"), instrument=instrument
    )


if __name__ == "__main__":
    main()
