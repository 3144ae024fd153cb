"""pyproject.toml's package list holds every package of every folder, and nothing else: a
subpackage missing from it would be left out of every wheel while a checkout still
imports it."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _packages_on_disk() -> set[str]:
    found = {"factledger"}
    for name, folder in SETUPTOOLS["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base).parts
            if "_mypyc" in relative or "__pycache__" in relative:
                continue
            found.add(".".join((name, *relative)))
    return found


def test_every_package_is_listed_and_every_listed_package_exists() -> None:
    listed = set(SETUPTOOLS["packages"])
    on_disk = _packages_on_disk()
    assert sorted(on_disk - listed) == [], "packages pyproject.toml leaves out of the wheel"
    assert sorted(listed - on_disk) == [], "listed packages with no folder"


def test_each_folder_maps_to_its_src_package() -> None:
    for name, folder in SETUPTOOLS["package-dir"].items():
        if name == "factledger":
            assert folder == "factledger"
            continue
        part = name.removeprefix("factledger.")
        assert folder == f"{part}/src/factledger/{part}"
