"""benchmarks.compiled_ab's summary: each stage's best and median per mode, and the changes."""

from __future__ import annotations

from benchmarks.compiled_ab import Run, summary


def test_the_summary_compares_the_best_and_the_median_of_each_mode() -> None:
    runs = [
        Run(compiled=False, stages={"assemble": 160.0, "validate": 100.0}),
        Run(compiled=True, stages={"assemble": 110.0, "validate": 101.0}),
        Run(compiled=False, stages={"assemble": 180.0, "validate": 90.0}),
        Run(compiled=True, stages={"assemble": 130.0, "validate": 89.0}),
        Run(compiled=False, stages={"assemble": 170.0, "validate": 95.0}),
        Run(compiled=True, stages={"assemble": 120.0, "validate": 95.0}),
    ]
    header, assemble, validate, note = summary(runs)
    assert header.split()[0] == "stage"
    assert assemble.split() == [
        "assemble",
        "160.0",
        "→",
        "110.0",
        "-31%",
        "170.0",
        "→",
        "120.0",
        "-29%",
    ]
    assert validate.split() == ["validate", "90.0", "→", "89.0", "-1%", "95.0", "→", "95.0", "+0%"]
    assert "3 runs of each mode" in note
