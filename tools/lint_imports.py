"""`lint-imports` over the one `factledger` package, whose parts live in several folders.

import-linter's graph builder (grimp) reads a package from the folders its import spec
names, and the spec of `factledger` names factledger/ alone: the subpackages are found
through the editable install's finder (collector/src/factledger/collector/...). So the
folders holding the installed subpackages are added to that spec before import-linter
runs; every module keeps its one name and path. The arguments are lint-imports' own.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from importlinter.cli import lint_imports_command

import factledger

SUBPACKAGES = ("collector", "processors", "dashboard", "schemas", "verifiers")


def package_folders() -> list[str]:
    """factledger/ and the folder above each subpackage (collector/src/factledger, ...)."""
    folders: list[str] = list(factledger.__spec__.submodule_search_locations or ())
    for name in SUBPACKAGES:
        spec = importlib.util.find_spec(f"factledger.{name}")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"factledger.{name} is not installed: run `make install-dev`")
        folder = str(Path(next(iter(spec.submodule_search_locations))).parent)
        if folder not in folders:
            folders.append(folder)
    return folders


def main(argv: list[str]) -> None:
    locations = factledger.__spec__.submodule_search_locations
    if locations is None:
        raise SystemExit("factledger is not a package here: run `make install-dev`")
    locations[:] = package_folders()
    lint_imports_command(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
