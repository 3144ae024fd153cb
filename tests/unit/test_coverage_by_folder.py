"""tools/coverage_by_folder.py: a coverage JSON report's files totalled per top-level folder."""

from __future__ import annotations

import pytest

from tools.coverage_by_folder import FolderTotal, by_folder, render


def _file(statements: int, missing: int) -> dict[str, dict[str, int]]:
    return {"summary": {"num_statements": statements, "missing_lines": missing}}


def test_files_are_summed_by_their_first_folder_with_the_total_last():
    report = {
        "collector/src/factledger/collector/pipeline.py": _file(100, 20),
        "collector/src/factledger/collector/store/turns.py": _file(50, 0),
        "processors/src/factledger/processors/model.py": _file(10, 5),
        "factledger/cli.py": _file(40, 40),
    }
    assert by_folder(report) == [
        FolderTotal("collector/", 2, 150, 20),
        FolderTotal("factledger/", 1, 40, 40),
        FolderTotal("processors/", 1, 10, 5),
        FolderTotal("total", 4, 200, 65),
    ]


@pytest.mark.parametrize(
    ("total", "percent"),
    [
        (FolderTotal("collector/", 2, 150, 20), 86.66666666666667),
        (FolderTotal("factledger/", 1, 40, 40), 0.0),
        (FolderTotal("schemas/", 2, 0, 0), 100.0),
    ],
    ids=["partly covered", "never run", "no statements"],
)
def test_percent_is_covered_statements_over_statements(total, percent):
    assert total.percent == pytest.approx(percent)


def test_render_prints_one_line_per_folder():
    table = render([FolderTotal("dashboard/", 16, 1711, 171), FolderTotal("total", 16, 1711, 171)])
    assert table.splitlines()[1:] == [
        "dashboard/         16        1711      171    90.0%",
        "total              16        1711      171    90.0%",
    ]
