"""A copy of what building the package reads, outside the checkout: its build files and
package sources, without caches or a compiled build."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md")


def _package_folders() -> tuple[str, ...]:
    """The top-level folders pyproject.toml maps packages from, and tools/ (the build)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    folders = pyproject["tool"]["setuptools"]["package-dir"].values()
    return (*dict.fromkeys(path.split("/")[0] for path in folders), "tools")


PACKAGE_SOURCES = _package_folders()


def copy_sources(destination: Path) -> Path:
    """`destination` holding a fresh copy of the package's build inputs (created)."""
    destination.mkdir()
    for name in BUILD_FILES:
        shutil.copy(ROOT / name, destination / name)
    for name in PACKAGE_SOURCES:
        shutil.copytree(
            ROOT / name,
            destination / name,
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", "_mypyc"),
        )
    return destination
