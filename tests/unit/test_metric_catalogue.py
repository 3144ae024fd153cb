"""Every metric name the code, the docs and the deployment files use is declared once in
the catalogue, with help text, and the docs' table is the catalogue."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from factledger.collector.metric_catalogue import CATALOGUE, Catalogue, Family
from factledger.collector.refusals import declared_outcome, refusal_classes

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "collector" / "src", ROOT / "processors" / "src", ROOT / "factledger"]
QUOTED_NAME = re.compile(r"""["'](factledger_[a-z_]+)["']""")
ANY_NAME = re.compile(r"\bfactledger_[a-z_]+")
HISTOGRAM_SERIES = ("_bucket", "_sum", "_count")
# Names of the metrics' shape that are not metrics of ours: what other products receive,
# the Datadog target's evaluation labels and tags (docs/export/datadog.md) and the guard's
# name inside the frameworks (factledger/guards).
NOT_METRICS = frozenset(
    {
        "factledger_verdict",
        "factledger_kind",
        "factledger_tokens",
        "factledger_tenant",
        "factledger_turn_id",
        "factledger_version",
        "factledger_judged_at_ms",
        "factledger_cause",
        "factledger_turn_url",
        "factledger_guard",
    }
)


def _declared(name: str) -> bool:
    if name in CATALOGUE or name in NOT_METRICS:
        return True
    base = next((name.removesuffix(s) for s in HISTOGRAM_SERIES if name.endswith(s)), None)
    family = CATALOGUE.get(base) if base else None
    return family is not None and family.type == "histogram"


def test_every_metric_name_in_the_code_is_declared() -> None:
    used = {
        name
        for tree in SOURCES
        for path in tree.rglob("*.py")
        for name in QUOTED_NAME.findall(path.read_text())
    }
    assert len(used) > 20  # the scan finds the names at all
    assert sorted(name for name in used if not _declared(name)) == []


def test_every_metric_the_docs_and_deployment_files_name_is_declared() -> None:
    files = [
        *(p for p in (ROOT / "docs").rglob("*") if p.is_file()),
        *(p for p in (ROOT / "deploy").rglob("*") if p.is_file()),
    ]
    named = {name for path in files for name in ANY_NAME.findall(path.read_text(errors="ignore"))}
    assert "factledger_requests_refused_total" in named
    assert sorted(name for name in named if not _declared(name)) == []


def test_every_family_has_help_and_the_docs_table_lists_it() -> None:
    rows = re.findall(
        r"^\| `(factledger_\w+)` \| (counter|gauge|histogram) \| .* \| (.+) \|$",
        (ROOT / "docs" / "ingest.md").read_text(),
        re.M,
    )
    assert {name: (kind, text) for name, kind, text in rows} == {
        family.name: (family.type, family.help) for family in CATALOGUE
    }


def test_refused_request_reasons_are_the_declared_refusal_reasons() -> None:
    declared = {o.reason for cls in refusal_classes() if (o := declared_outcome(cls))}
    known = CATALOGUE["factledger_requests_refused_total"].known["reason"]
    assert set(known) == declared
    refused_spans = CATALOGUE["factledger_spans_refused_total"].known["reason"]
    assert set(refused_spans) <= declared


def test_a_name_is_declared_once() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        Catalogue(
            [
                Family("factledger_x_total", "counter", "X."),
                Family("factledger_x_total", "gauge", "X."),
            ]
        )
