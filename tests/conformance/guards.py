"""The guard set-ups: each framework's adapter (factledger.guards) run in its framework's
virtualenv against the scripted LLM, and what each case must give.

A run is the set-up program over every guard case at once (`run_guard_setup`); the
scripted LLM's exchanges of a case are those whose request names the case's repository,
so a test counts the model calls and reads the nudges the model was sent.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .fake_llm import Exchange, FakeLlm
from .harness import RUN_TIMEOUT_SECONDS
from .registry import ENVS, ROOT
from .setups._common import REPO_PATTERN, commit_sha, fabricated_sha

NUDGE_MARKER = "[FACTLEDGER SELF-CORRECTION"
PATHS = ("", "processors/src", "verifiers/src")
"""What `pip install factledger` puts on the path, from the checkout."""

CASES: Mapping[str, str] = {
    "guard-fab": "Push branch main of acme/guard-fab.",
    "guard-fab-stuck": "Push branch main of acme/guard-fab-stuck.",
    "guard-raise-fab-stuck": "Push branch main of acme/guard-raise-fab-stuck.",
    "guard-err-object": "Push branch main of acme/guard-err-object.",
    "guard-clean": "Push branch main of acme/guard-clean.",
    "guard-echo": (
        "Push branch main of acme/guard-echo on top of commit "
        f"{fabricated_sha('acme/guard-echo', 'main')}."
    ),
}


@dataclass(frozen=True)
class GuardSetUp:
    id: str
    env: str
    program: str
    exhausted_error: str
    """The type name of the framework's error that `on_exhausted="raise"` raises."""
    streams: bool = False
    """The model's answers are streamed (server-sent events)."""
    retries: bool = True
    """The framework retries with the nudge (False: footnote only, `max_nudges=0`)."""
    extra_env: Mapping[str, str] = field(default_factory=dict)

    @property
    def interpreter(self) -> Any:
        return ENVS / self.env / "bin" / "python"


@dataclass
class GuardRun:
    setup: GuardSetUp
    outputs: dict[str, str]
    errors: dict[str, str]
    guard: dict[str, list[dict[str, Any]]]
    exchanges: dict[str, list[Exchange]]
    output: str


def run_guard_setup(setup: GuardSetUp, llm: FakeLlm) -> GuardRun:
    """Run every guard case through `setup` and gather the model's exchanges by case."""
    first = len(llm.exchanges)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in PATHS),
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_BASE": llm.base_url,
        "OPENAI_API_KEY": "sk-conformance-0000",
        "OTEL_SERVICE_NAME": setup.id,
        "CONFORMANCE_CASES": json.dumps({case: [text] for case, text in CASES.items()}),
        **setup.extra_env,
    }
    process = subprocess.run(
        [str(setup.interpreter), "-m", f"tests.conformance.setups.{setup.program}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_SECONDS,
        check=False,
    )
    output = process.stdout[-20_000:] + process.stderr[-20_000:]
    result = next(
        (json.loads(line) for line in reversed(process.stdout.splitlines()) if '"outputs"' in line),
        None,
    )
    if process.returncode != 0 or result is None:
        raise AssertionError(f"{setup.id} exited with {process.returncode}:\n{output}")
    exchanges: dict[str, list[Exchange]] = {case: [] for case in CASES}
    for exchange in llm.exchanges[first:]:
        case = _case_of(exchange)
        if case in exchanges:
            exchanges[case].append(exchange)
    return GuardRun(setup, result["outputs"], result["errors"], result["guard"], exchanges, output)


def _case_of(exchange: Exchange) -> str:
    for message in exchange.request.messages:
        if message.role == "user":
            found = REPO_PATTERN.search(message.text)
            if found:
                return found.group(1).removeprefix("acme/")
    return ""


def nudges_seen(exchanges: list[Exchange]) -> list[str]:
    """The nudges the model was sent in a case, as it read them (each once)."""
    seen: dict[str, None] = {}
    for exchange in exchanges:
        for message in exchange.request.messages:
            if NUDGE_MARKER in message.text:
                seen.setdefault(message.text)
    return list(seen)


def corrected(case: str) -> str:
    return f"Pushed main to acme/{case}: commit {commit_sha(f'acme/{case}', 'main')[:12]}."


def fabricated(case: str) -> str:
    sha = fabricated_sha(f"acme/{case}", "main")
    return f"Pushed main to acme/{case}. The new head is commit {sha}."
