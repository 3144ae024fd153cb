"""The README's quick start, run as a user runs it: its program, taken from the README,
in a virtualenv of exactly the packages its `pip install` line names
(`envs/quickstart.txt`), against the scripted LLM and a real service over OTLP/gRPC.

The scripted LLM calls `git_push` and then answers "Done." (it has no commit to quote,
since the push was refused), so the turn the README describes as the one to look for is
the one stored: a `reject` for `error_reported_as_success`.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from factledger.service_process import ServiceProcess

from .fake_llm import FakeLlm
from .harness import RUN_TIMEOUT_SECONDS, settle, turns_of
from .registry import ENVS, REQUIREMENTS, ROOT

SECTION = "## Your own agent's first turn"
SERVICE = "readme-quickstart"


def _section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index(SECTION)
    end = readme.find("\n## ", start + len(SECTION))
    return readme[start : end if end != -1 else None]


def _block(language: str) -> str:
    found = re.search(rf"```{language}\n(.*?)```", _section(), re.S)
    assert found, f"the quick start has no {language} block"
    return found.group(1)


def _installed_by_readme() -> set[str]:
    line = next(line for line in _block("sh").splitlines() if line.startswith("pip install "))
    return set(line.removeprefix("pip install ").split())


def _pinned() -> set[str]:
    lines = (REQUIREMENTS / "quickstart.txt").read_text(encoding="utf-8").splitlines()
    return {line.split("==")[0] for line in lines if line and not line.startswith("#")}


def test_the_quick_start_environment_holds_what_the_readme_installs() -> None:
    assert _pinned() == _installed_by_readme()


def test_the_quick_start_sends_a_turn_the_service_judges_as_the_readme_says(
    service: ServiceProcess, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    python = ENVS / "quickstart" / "bin" / "python"
    if not python.exists():
        message = f"{python} is missing: `make conformance-envs` builds it"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    program = tmp_path / "agent.py"
    program.write_text(_block("python"), encoding="utf-8")
    first = len(fake_llm.exchanges)
    process = subprocess.run(
        [str(python), str(program)],
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
            "OTEL_SERVICE_NAME": SERVICE,
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{service.grpc_target}",
            "OPENAI_BASE_URL": fake_llm.base_url,
            "OPENAI_API_KEY": "sk-conformance-0000",
        },
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_SECONDS,
        check=False,
    )
    assert process.returncode == 0, process.stdout + process.stderr
    assert process.stdout.strip() == "Done."
    assert "Error" not in process.stderr, process.stderr  # an exporter that failed says so
    exchanges = fake_llm.exchanges[first:]
    assert len(exchanges) == 2  # the push, then the answer

    settle(service.url)
    [turn] = turns_of(service.url, SERVICE)
    assert turn["verdict"] == "reject"
    assert [f["kind"] for f in turn["findings"]] == ["error_reported_as_success"]
    assert [c["name"] for c in turn["tool_calls"]] == ["git_push"]
    assert "remote rejected" in str(turn["tool_calls"][0]["result"])

    section = _section()
    assert "`error_reported_as_success`" in section and "`reject`" in section
