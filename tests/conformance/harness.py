"""Running one set-up against a real `factledger serve` and reading back its turns.

The set-up program runs in its own virtualenv (a Node set-up: on the npm folder's Node) as
a child process, exports its spans to the service over OTLP/HTTP (configured by
`OTEL_EXPORTER_OTLP_ENDPOINT` alone) and talks to the scripted LLM. When it has exited
(after flushing), the service is asked until nothing is in flight, and the turns of the
set-up's service are read with their details.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from factledger.service_process import free_port

from .cases import messages
from .registry import ROOT, SetUp

RUN_TIMEOUT_SECONDS = 240.0
"""A set-up's whole run: framework import and every conversation (CrewAI imports slowly)."""

SETTLE_TIMEOUT_SECONDS = 60.0

_GAUGES = ("factledger_queue_spans", "factledger_assembly_queue_spans", "factledger_open_turns")


@dataclass
class SetUpRun:
    """What one set-up did: its result line and the turns its service holds."""

    setup: SetUp
    versions: dict[str, str] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    turns: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""


def run_setup(setup: SetUp, service_url: str, llm_url: str) -> SetUpRun:
    """Run `setup`'s conversations, wait until the service has judged every turn, and
    return the run with the details of its turns (oldest first)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "OTEL_EXPORTER_OTLP_ENDPOINT": service_url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_SERVICE_NAME": setup.id,
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_BASE": llm_url,
        "OPENAI_API_KEY": "sk-conformance-0000",
        "CONFORMANCE_CASES": json.dumps({case: messages(case) for case in setup.cases}),
        # For a set-up that starts a server of its own: reserved here, where the
        # reservation lives (a set-up's virtualenv does not have factledger).
        "CONFORMANCE_FREE_PORT": str(free_port()),
        **setup.extra_env,
    }
    process = subprocess.run(
        setup.command,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_SECONDS,
        check=False,
    )
    run = SetUpRun(setup, output=process.stdout[-20_000:] + process.stderr[-20_000:])
    result = _result_line(process.stdout)
    if process.returncode != 0 or result is None:
        raise AssertionError(
            f"{setup.id} exited with {process.returncode} and no result line:\n{run.output}"
        )
    run.versions, run.ran, run.errors = result["versions"], result["ran"], result["errors"]
    settle(service_url)
    run.turns = turns_of(service_url, setup.id)
    return run


def settle(service_url: str) -> None:
    """Wait until no span is queued and no turn is open in the service."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_SECONDS
    quiet_since: float | None = None
    while time.monotonic() < deadline:
        text = httpx.get(f"{service_url}/metrics", timeout=10).text
        if all(_gauge(text, name) == 0 for name in _GAUGES):
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= 1.0:
                return
        else:
            quiet_since = None
        time.sleep(0.2)
    raise AssertionError(f"the service did not settle within {SETTLE_TIMEOUT_SECONDS} s")


def turns_of(service_url: str, service: str) -> list[dict[str, Any]]:
    """Every stored turn of `service`, with its details, oldest first."""
    page = httpx.get(f"{service_url}/api/v1/turns", params={"limit": 1000}, timeout=30).json()
    summaries = [t for t in page["turns"] if t["service"] == service]
    details = [
        httpx.get(f"{service_url}/api/v1/turns/{t['turn_id']}", timeout=30).json()
        for t in summaries
    ]
    return sorted(details, key=lambda t: str(t["started_at"]))


def _gauge(metrics: str, name: str) -> float:
    total = 0.0
    for match in re.finditer(rf"^{name}(?:{{[^}}]*}})? (\S+)$", metrics, re.M):
        total += float(match.group(1))
    return total


def _result_line(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{") and '"versions"' in line:
            parsed: dict[str, Any] = json.loads(line)
            return parsed
    return None
