"""The set-ups of the conformance suite: framework, instrumentation and what to expect.

A set-up is a program in `setups/` run in the virtualenv `.conformance/<env>/`, built by
`make conformance-envs` from `envs/<env>.txt` (pinned versions), or, for a Node.js
framework, a program `node/<program>.mjs` run by the Node of the npm folder `node/`
(installed from its lock file into `.conformance/node/`). One program may serve several
set-ups: `CONFORMANCE_INSTRUMENTATION` tells it which instrumentation to install.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .cases import FAILURES, SINGLE, TEAM

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / ".conformance"
REQUIREMENTS = Path(__file__).resolve().parent / "envs"
NODE_PROGRAMS = Path(__file__).resolve().parent / "node"
NODE_ENV = ENVS / "node"
NODE = NODE_ENV / "node_modules" / "node" / "bin" / "node"
"""The Node the npm folder pins (the registry's `node` package): the frameworks need a newer
one than a machine may have, and every Node set-up runs on the same one."""
NODE_SDK_TRACES_ONLY: Mapping[str, str] = {
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
}
"""The environment of a set-up on the OpenTelemetry Node SDK: it exports metrics and logs
too unless told not to, and the service receives traces only, so the set-up turns the
others off as a user of such a backend would."""


@dataclass(frozen=True)
class SetUp:
    """One framework with one instrumentation, as its documentation sets it up."""

    id: str
    """Also the OTel service name its spans carry."""
    framework: str
    instrumentation: str
    program: str
    """Module under `tests.conformance.setups` (a Python set-up) or the name of a program
    `node/<program>.mjs` (a Node set-up)."""
    env: str
    """The virtualenv under `.conformance/`; `node` for every Node set-up."""
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
    runtime: Literal["python", "node"] = "python"
    """`python` (a module run in its virtualenv) or `node` (a program of the npm folder)."""

    @property
    def python(self) -> Path:
        return ENVS / self.env / "bin" / "python"

    @property
    def interpreter(self) -> Path:
        """What runs the program; missing until `make conformance-envs` has built it."""
        return NODE if self.runtime == "node" else self.python

    @property
    def command(self) -> list[str]:
        """The command line that runs the set-up, from the repository's root."""
        if self.runtime == "node":
            return [str(NODE), str(NODE_PROGRAMS / f"{self.program}.mjs")]
        return [str(self.python), "-m", f"tests.conformance.setups.{self.program}"]

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
        mastra,
        mcp_tools,
        openai_agents,
        openai_agents_js,
        openai_sdk,
        pydantic_ai,
        semantic_kernel,
        smolagents,
        strands,
        traceloop_sdk,
        vercel_ai,
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
        vercel_ai,
        openai_agents_js,
        mastra,
    )
    return tuple(setup for family in families for setup in family.SETUPS)


SETUPS: tuple[SetUp, ...] = _all()


def by_id(setup_id: str) -> SetUp:
    for setup in SETUPS:
        if setup.id == setup_id:
            return setup
    raise KeyError(setup_id)
