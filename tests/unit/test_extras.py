"""The light install: pyproject.toml's extras are what factledger/extras.py names, the agent
side imports none of them, and a command that needs a missing extra says in one line what
to install (exit status 2)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from factledger.cli import main
from factledger.extras import EXTRA_MODULES, MissingExtra, missing_modules, require

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
HEAVY = ("fastapi", "uvicorn", "chdb", "clickhouse-connect", "streamlit", "pandas", "altair")
"""What the agent side must not install (pyarrow and numpy come only with these)."""
EXAMPLE = ROOT / "examples" / "pushed_without_tool.json"


def _name(requirement: str) -> str:
    """The distribution a requirement names, normalized as pip compares them."""
    found = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert found, requirement
    return re.sub(r"[-_.]+", "-", found.group(0)).lower()


@pytest.mark.parametrize("extra", sorted(EXTRA_MODULES))
def test_each_extra_installs_what_its_commands_check_for(extra: str) -> None:
    assert sorted(_name(r) for r in EXTRAS[extra]) == sorted(EXTRA_MODULES[extra])


def test_all_is_every_extra_but_the_tools() -> None:
    (everything,) = EXTRAS["all"]
    assert everything == f"factledger[{','.join(EXTRA_MODULES)}]"


def test_the_base_install_has_no_service_or_dashboard_dependency() -> None:
    base = {_name(r) for r in PROJECT["dependencies"]}
    assert not base & set(HEAVY)
    assert not base & {name for modules in EXTRA_MODULES.values() for name in modules}


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """As if `modules` were not installed: a None in sys.modules fails their import."""
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


@pytest.mark.parametrize(
    ("argv", "hidden", "message"),
    [
        pytest.param(
            ["serve"],
            ["chdb"],
            "factledger serve needs the service extra: pip install 'factledger[service]'",
            id="serve-without-chdb",
        ),
        pytest.param(
            ["dashboard"],
            ["streamlit"],
            "factledger dashboard needs the dashboard extra: pip install 'factledger[dashboard]'",
            id="dashboard-without-streamlit",
        ),
        pytest.param(
            ["up"],
            ["fastapi", "altair"],
            "factledger up needs the service and dashboard extras:"
            " pip install 'factledger[service,dashboard]'",
            id="up-without-either",
        ),
        pytest.param(
            ["up"],
            ["pandas"],
            "factledger up needs the dashboard extra: pip install 'factledger[dashboard]'",
            id="up-without-the-dashboard",
        ),
        pytest.param(
            ["alerts", "check"],
            ["clickhouse_connect"],
            "factledger alerts check needs the service extra: pip install 'factledger[service]'",
            id="alerts-without-the-driver",
        ),
        pytest.param(
            ["reviews", "export"],
            ["httpx", "uvicorn"],
            "factledger reviews export needs the service extra: pip install 'factledger[service]'",
            id="reviews-without-httpx",
        ),
    ],
)
def test_a_command_without_its_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    hidden: list[str],
    message: str,
) -> None:
    _hide(monkeypatch, *hidden)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == message + "\n"
    assert captured.out == ""


def test_up_without_a_dashboard_needs_no_dashboard_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "streamlit")
    assert missing_modules("dashboard") == ["streamlit"]
    require("up", "service")
    with pytest.raises(MissingExtra, match=r"\[dashboard\]"):
        require("up", "service", "dashboard")


LIGHT_PROBE = """
import json, sys
for module in HIDDEN:
    sys.modules[module] = None  # not installed: importing it fails

import factledger.instrument
import factledger.processors.span_processor
from factledger import check
from factledger.cli import main

transcript = json.loads(open(EXAMPLE, encoding="utf-8").read())
print(json.dumps({"verdict": check(transcript).outcome.value}))
sys.stdout.flush()
main(["check", EXAMPLE])
sys.exit(main(["serve"]))
"""


def test_the_agent_side_imports_no_service_or_dashboard_module() -> None:
    hidden = sorted(
        {module for modules in EXTRA_MODULES.values() for module in modules.values()}
        | {"pyarrow", "numpy", "pydantic", "starlette"}
    )
    prelude = f"HIDDEN = {hidden!r}\nEXAMPLE = {str(EXAMPLE)!r}\n"
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(LIGHT_PROBE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    first, *rest = done.stdout.splitlines()
    assert json.loads(first) == {"verdict": "reject"}
    assert rest[0] == "verdict: reject"
    assert done.stderr == (
        "factledger serve needs the service extra: pip install 'factledger[service]'\n"
    )
