"""The guard inside the agent loop: check each final reply, nudge the model, retry, footnote.

`policy` decides, framework-neutral, from an OpenAI-style transcript of the turn;
`telemetry` records each decision on the current OpenTelemetry span. One adapter module
per framework (`for_pydantic_ai`, `for_openai_agents`, `for_smolagents`, `for_langchain`,
`for_crewai`, `for_google_adk`, `for_strands`) builds the transcript from the framework's
own run state and turns a decision into the framework's own kind of retry; each imports
only its framework and `factledger` (docs/guards.md).
"""

from factledger.guards.policy import Decision, GuardExhausted, GuardPolicy, nudges_in

__all__ = ["Decision", "GuardExhausted", "GuardPolicy", "nudges_in"]
