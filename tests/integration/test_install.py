"""How the project installs: `make run` installs the package with its service and dashboard
extras with pip's output visible, `make test` the development tools too, and building the
package's metadata (what `pip install -e .` runs) prints no deprecation warning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.integration.source_tree import copy_sources

ROOT = Path(__file__).resolve().parents[2]


def _dry_run(target: str, venv: Path) -> list[str]:
    """The commands `make TARGET` would run on a machine without a virtualenv."""
    done = subprocess.run(
        ["make", "-n", f"VENV={venv}", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def _pip_installs(lines: list[str]) -> list[str]:
    return [line for line in lines if "pip install" in line]


def test_make_run_installs_the_package_and_its_extras_with_pip_output_visible(tmp_path: Path):
    installs = _pip_installs(_dry_run("run", tmp_path / "venv"))
    package = [line for line in installs if " -e " in line]
    assert package, installs
    for line in package:
        assert line.rstrip().endswith("-e '.[all]'"), f"not the package with every extra: {line}"
    for line in installs:
        assert "--quiet" not in line.split() and "-q" not in line.split(), line


def test_make_test_installs_the_development_tools(tmp_path: Path):
    installs = _pip_installs(_dry_run("test", tmp_path / "venv"))
    assert any("'.[all,dev]'" in line for line in installs), installs


def test_package_metadata_builds_without_deprecation_warnings(tmp_path: Path):
    source = copy_sources(tmp_path / "source")
    metadata = tmp_path / "metadata"
    metadata.mkdir()
    built = subprocess.run(
        [
            sys.executable,
            "-W",
            "always",
            "-c",
            "import sys, setuptools.build_meta as backend;"
            "print(backend.prepare_metadata_for_build_editable(sys.argv[1]))",
            str(metadata),
        ],
        cwd=source,
        capture_output=True,
        text=True,
    )
    output = built.stdout + built.stderr
    assert built.returncode == 0, output
    assert "Deprecat" not in output, output
    assert "!!" not in output, output
    info = next(metadata.glob("*.dist-info"))
    assert "License-Expression: Apache-2.0" in (info / "METADATA").read_text()
