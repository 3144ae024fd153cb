"""The wheel the project builds, installed alone (`pip install factledger`, no extra) into a
fresh virtualenv: it carries the compiled modules and runs them, pure Python gives the same
answers, and the agent side works there without any service or dashboard module.

The wheel is built from this checkout with pip's build isolation (setuptools and the pinned
mypy from pyproject.toml); its dependencies come from pip's cache and the configured index,
plus --find-links to the wheel itself. Half a minute when `make compiled` has built the
modules (the wheel reuses them), two or three more otherwise. A wheel built where no C
compiler runs is pure Python, and still built.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from factledger.compiled import MANIFEST_NAME, PURE_PYTHON_ENV, Manifest, extension_suffix
from tests.integration.otlp_turns import write_eval_cases
from tests.integration.source_tree import copy_sources

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "tests" / "corpus").glob("*.jsonl"))
TRANSCRIPT = ROOT / "examples" / "pushed_without_tool.json"
PROBES = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Installed:
    wheel: Path
    python: Path
    factledger: Path
    """The `factledger` script of the virtualenv."""
    work: Path
    """A directory outside the checkout, where the installed package is the one imported."""


def _run(
    *command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        cwd=cwd,
        env=env,
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("wheel")
    wheels = base / "wheels"
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", wheels, ROOT)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("factledger-*.whl")
    venv.create(base / "venv", with_pip=True)
    python = base / "venv" / "bin" / "python"
    added = _run(python, "-m", "pip", "install", "--find-links", wheels, wheel)
    assert added.returncode == 0, added.stdout + added.stderr
    work = base / "work"
    work.mkdir()
    yield Installed(wheel, python, base / "venv" / "bin" / "factledger", work)


def _env(*, pure: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (PURE_PYTHON_ENV, "PYTHONPATH")}
    if pure:
        env[PURE_PYTHON_ENV] = "1"
    return env


def test_the_wheel_carries_the_compiled_modules_and_their_manifest(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        manifest = Manifest.from_json(wheel.read(f"factledger/_mypyc/{MANIFEST_NAME}").decode())
    assert manifest is not None
    assert manifest.extension_suffix == extension_suffix()
    assert "factledger.processors.assembly.assembler" in manifest.compiled
    assert {f"factledger/_mypyc/{binary}" for binary in manifest.modules.values()} <= names
    assert {f"factledger/{source}" for source in manifest.sources} <= names
    assert "-cp311-cp311-" in installed.wheel.name, "compiled code: tagged for its interpreter"


INSTALLED_STATUS = """
import json, sys
import factledger.processors.assembly.assembler as assembler
from factledger.compiled import BUILD_DIR, compiled_status
status = compiled_status()
print(json.dumps({"active": status.active, "reason": status.reason,
                  "modules": list(status.modules), "assembler": assembler.__file__,
                  "build_dir": str(BUILD_DIR), "prefix": sys.prefix}))
"""


def test_the_installed_package_runs_its_compiled_modules(installed: Installed) -> None:
    done = _run(installed.python, "-c", INSTALLED_STATUS, cwd=installed.work, env=_env())
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["active"], status["reason"]
    assert "factledger.processors.assembly.assembler" in status["modules"]
    assembler = Path(status["assembler"])
    assert assembler.is_relative_to(status["build_dir"]), assembler
    assert assembler.is_relative_to(status["prefix"]), "imported from the checkout"
    assert assembler.name.endswith(extension_suffix())


def _probe(installed: Installed, cases: Path, *, pure: bool) -> list[str]:
    done = _run(
        installed.python,
        PROBES / "compiled_probe.py",
        cases,
        cwd=installed.work,
        env=_env(pure=pure),
    )
    assert done.returncode in (0, 1), done.stderr  # 1: the eval found mismatches
    return done.stdout.splitlines()


def test_pure_python_gives_the_installed_compiled_answers(
    installed: Installed, tmp_path: Path
) -> None:
    cases = write_eval_cases(tmp_path / "cases.jsonl", CORPUS)
    compiled = _probe(installed, cases, pure=False)
    pure = _probe(installed, cases, pure=True)
    assert json.loads(compiled[0])["compiled"] is True
    assert json.loads(pure[0]) == {"compiled": False, "modules": []}
    assert len(compiled) > 300
    different = [(a, b) for a, b in zip(compiled[1:], pure[1:], strict=True) if a != b]
    assert not different, f"{len(different)} lines differ, first:\n{different[0]}"


def test_the_base_install_runs_the_agent_side_without_service_modules(
    installed: Installed,
) -> None:
    done = _run(
        installed.python,
        PROBES / "light_install_probe.py",
        TRANSCRIPT,
        cwd=installed.work,
        env=_env(),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["importable"] == []
    assert report["check"] == "reject"
    assert "claim_without_tool" in report["check_kinds"]
    assert report["span_processor"]["verdicts"] == ["reject"]  # one turn, judged in-process
    assert "claim_without_tool" in report["span_processor"]["kinds"]


@pytest.mark.parametrize(
    ("argv", "code", "first_line"),
    [
        pytest.param(["check", str(TRANSCRIPT)], 0, "verdict: reject", id="check"),
        pytest.param(
            ["serve"],
            2,
            "factledger serve needs the service extra: pip install 'factledger[service]'",
            id="serve",
        ),
        pytest.param(
            ["dashboard"],
            2,
            "factledger dashboard needs the dashboard extra: pip install 'factledger[dashboard]'",
            id="dashboard",
        ),
    ],
)
def test_the_base_install_command_line(
    installed: Installed, argv: list[str], code: int, first_line: str
) -> None:
    done = _run(installed.factledger, *argv, cwd=installed.work, env=_env())
    assert done.returncode == code, done.stdout + done.stderr
    output = done.stdout if code == 0 else done.stderr
    assert output.splitlines()[0] == first_line
    assert "Traceback" not in done.stderr


def test_without_a_c_compiler_the_wheel_is_built_pure_python_with_a_warning(
    tmp_path: Path,
) -> None:
    # A copy without the checkout's build, so the wheel has to compile; the compiler the
    # build is told to use does not exist. Built in this environment (no isolation): it
    # has the build's requirements, and the point is the failure, not fetching them.
    source = copy_sources(tmp_path / "source")
    env = {**_env(), "CC": str(tmp_path / "no-such-cc")}
    wheels = tmp_path / "wheels"
    built = _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-v",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        wheels,
        source,
        env=env,
    )
    output = built.stdout + built.stderr
    assert built.returncode == 0, output
    assert "WARNING: the mypyc build failed" in output
    assert "runs every module from its Python source" in output
    (wheel,) = wheels.glob("factledger-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "factledger/processors/assembly/assembler.py" in names
    assert not [name for name in names if "_mypyc" in name]
