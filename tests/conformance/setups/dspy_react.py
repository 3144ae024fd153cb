"""A DSPy `ReAct` program instrumented by OpenInference
(`DSPyInstrumentor().instrument(tracer_provider=...)`), as its README shows.

The LM is `dspy.LM("openai/fake-gpt", api_base=..., api_key=...)` (LiteLLM) on the
scripted LLM, with DSPy's default ChatAdapter (the model answers in DSPy's field markers)
or, with `CONFORMANCE_ADAPTER=json`, its JSONAdapter (the fields as one JSON object).
A conversation keeps its turns in a `dspy.History` input field, as DSPy's multi-turn guide
does: each request gets the earlier questions, trajectories and answers. A failing push
raises (ReAct hands "Execution error in git_push: ..." to the model as the observation) or
returns the error object. DSPy has no multi-agent construct of its own: no team variant.
"""

# No `from __future__ import annotations`: DSPy reads a signature's field types from its
# class annotations at run time, and strings are not types to it.
import os
from typing import Any

import dspy

from tests.conformance.setups import _common


def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push a branch of a repository (owner/name) to its remote."""
    return _common.push(repo, branch)


class PushRequest(dspy.Signature):  # type: ignore[misc]  # dspy is not installed here: Any
    """Answer the user's request about pushing branches, using the tools."""

    question: str = dspy.InputField()
    history: dspy.History = dspy.InputField()
    answer: str = dspy.OutputField()


def main() -> None:
    from openinference.instrumentation.dspy import DSPyInstrumentor

    # LiteLLM fetches its model cost map from the web at import unless told to use the
    # copy it ships; there is no network here (Google ADK's set-up does the same).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    provider = _common.tracer_provider()
    DSPyInstrumentor().instrument(tracer_provider=provider)
    lm = dspy.LM(
        "openai/fake-gpt",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        cache=False,
    )
    # `CONFORMANCE_ADAPTER=json`: DSPy's JSONAdapter (the fields as one JSON object) in
    # place of the default ChatAdapter (the fields in markers).
    json_fields = os.environ.get("CONFORMANCE_ADAPTER") == "json"
    dspy.configure(lm=lm, adapter=dspy.JSONAdapter() if json_fields else dspy.ChatAdapter())

    def conversation(case: str, messages: list[str]) -> None:
        agent = dspy.ReAct(PushRequest, tools=[git_push], max_iters=5)
        history = dspy.History(messages=[])
        for text in messages:
            prediction = agent(question=text, history=history)
            history.messages.append({"question": text, **prediction})

    _common.run(
        conversation,
        packages=("dspy", "openinference-instrumentation-dspy", "opentelemetry-sdk"),
        flush=provider.force_flush,
    )


if __name__ == "__main__":
    main()
