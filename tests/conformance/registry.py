"""The set-ups of the conformance suite: framework, instrumentation and what to expect.

A set-up is a program in `setups/` run in the virtualenv `.conformance/<env>/`, built by
`make conformance-envs` from `envs/<env>.txt` (pinned versions). One program may serve
several set-ups: `CONFORMANCE_INSTRUMENTATION` tells it which instrumentation to install.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .cases import FAILURES, SINGLE, TEAM

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / ".conformance"
REQUIREMENTS = Path(__file__).resolve().parent / "envs"


@dataclass(frozen=True)
class SetUp:
    """One framework with one instrumentation, as its documentation sets it up."""

    id: str
    """Also the OTel service name its spans carry."""
    framework: str
    instrumentation: str
    program: str
    """Module under `tests.conformance.setups`."""
    env: str
    packages: tuple[str, ...]
    """Distributions whose versions the table shows."""
    agent: str
    """The agent's own name, expected on every turn ("" where the framework names none)."""
    model: str = "fake-gpt"
    failures: tuple[str, ...] = FAILURES
    """The ways of failing a tool that the framework documents (a subset of FAILURES)."""
    team_agent: str | None = None
    """The name the turns of the multi-agent variant carry; None: no such variant."""
    extra_env: Mapping[str, str] = field(default_factory=dict)
    unnamed_agent: Mapping[str, str] = field(default_factory=dict)
    """Cases whose spans name no agent at all (the instrumentation does not trace the API
    they use), with the reason: their turns must carry no agent name rather than a wrong
    one, and the table says so."""
    unavailable: str = ""
    """Why the set-up cannot run here (it is listed, with this reason, not dropped)."""

    @property
    def python(self) -> Path:
        return ENVS / self.env / "bin" / "python"

    @property
    def cases(self) -> tuple[str, ...]:
        single = tuple(c for c in SINGLE if c not in FAILURES or c in self.failures)
        return single + (TEAM if self.team_agent is not None else ())


def _all() -> tuple[SetUp, ...]:
    # One module per framework family, each with its own SETUPS, in the table's order.
    from .frameworks import (
        agent_framework,
        agno,
        autogen,
        beeai,
        crewai,
        dspy,
        google_adk,
        haystack,
        langchain,
        litellm,
        llama_index,
        mcp_tools,
        openai_agents,
        openai_sdk,
        pydantic_ai,
        semantic_kernel,
        smolagents,
        strands,
        traceloop_sdk,
    )

    families = (
        openai_sdk,
        openai_agents,
        langchain,
        pydantic_ai,
        smolagents,
        traceloop_sdk,
        crewai,
        google_adk,
        autogen,
        llama_index,
        agno,
        litellm,
        beeai,
        haystack,
        strands,
        dspy,
        semantic_kernel,
        agent_framework,
        mcp_tools,
    )
    return tuple(setup for family in families for setup in family.SETUPS)


SETUPS: tuple[SetUp, ...] = _all()


def by_id(setup_id: str) -> SetUp:
    for setup in SETUPS:
        if setup.id == setup_id:
            return setup
    raise KeyError(setup_id)
