"""The import-linter contracts in pyproject.toml cover the code as it is laid out: every
command-line module is forbidden to the collector, and the linter reads every folder that
setuptools installs a part of factledger from."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from tools.lint_imports import package_folders

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
CONTRACTS: dict[str, dict[str, Any]] = {
    contract["name"]: contract for contract in PYPROJECT["tool"]["importlinter"]["contracts"]
}


def test_the_collector_may_import_no_command_line_module():
    cli_modules = {
        f"factledger.{path.stem}"
        for path in (ROOT / "factledger").glob("*.py")
        if path.stem in ("cli", "up", "demo") or path.stem.endswith("_cli")
    }
    forbidden = set(CONTRACTS["collector does not depend on the command line"]["forbidden_modules"])
    assert cli_modules == forbidden


def test_the_linter_reads_every_installed_folder():
    package_dir: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]
    folders = {Path(folder).resolve() for folder in package_folders()}
    for name, folder in package_dir.items():
        # factledger/ itself, and collector/src/factledger for factledger.collector.
        above = ROOT / folder if name == "factledger" else (ROOT / folder).parent
        assert above.resolve() in folders, name


def test_the_contracts_are_kept():
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "lint_imports.py"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in done.stdout
