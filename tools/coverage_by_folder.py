"""Line coverage per top-level folder (factledger/, collector/, processors/, ...).

coverage.py reports per file; this totals its JSON report by the first part of each
file's path, so each folder's figure reads at a glance. Run after `coverage combine`:

    .venv/bin/python tools/coverage_by_folder.py            # the .coverage data here
    .venv/bin/python tools/coverage_by_folder.py --json coverage.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class FolderTotal:
    folder: str
    files: int
    statements: int
    missing: int

    @property
    def percent(self) -> float:
        """Covered statements over statements, 100.0 for a folder without any."""
        if not self.statements:
            return 100.0
        return 100.0 * (self.statements - self.missing) / self.statements


def by_folder(files: Mapping[str, Mapping[str, Any]]) -> list[FolderTotal]:
    """Sum the `summary` of each file of a coverage JSON report by its top-level folder,
    in folder order, with the total of all last (folder `total`)."""
    sums: dict[str, list[int]] = {}
    for path, measured in files.items():
        folder = Path(path).parts[0] + "/" if len(Path(path).parts) > 1 else "./"
        summary = measured["summary"]
        row = sums.setdefault(folder, [0, 0, 0])
        row[0] += 1
        row[1] += summary["num_statements"]
        row[2] += summary["missing_lines"]
    totals = [FolderTotal(folder, *sums[folder]) for folder in sorted(sums)]
    everything = FolderTotal(
        "total",
        sum(t.files for t in totals),
        sum(t.statements for t in totals),
        sum(t.missing for t in totals),
    )
    return [*totals, everything]


def render(totals: Iterable[FolderTotal]) -> str:
    lines = [f"{'folder':<14}{'files':>7}{'statements':>12}{'missed':>9}{'cover':>9}"]
    for total in totals:
        lines.append(
            f"{total.folder:<14}{total.files:>7}{total.statements:>12}"
            f"{total.missing:>9}{total.percent:>8.1f}%"
        )
    return "\n".join(lines)


def json_report() -> dict[str, Any]:
    """The JSON report of the coverage data in the current directory, as pyproject.toml
    configures it (files never imported count, with every statement missed)."""
    import coverage

    measured = coverage.Coverage()
    measured.load()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "coverage.json"
        measured.json_report(outfile=str(out))
        report: dict[str, Any] = json.loads(out.read_text())
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="a `coverage json` report to read instead")
    args = parser.parse_args()
    report = json.loads(args.json.read_text()) if args.json else json_report()
    print(render(by_folder(report["files"])))


if __name__ == "__main__":
    main()
