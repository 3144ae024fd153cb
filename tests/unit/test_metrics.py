"""Metrics render in the Prometheus text format with escaped labels."""

from __future__ import annotations

import pytest

from factledger.collector.alerts.evaluator import GroupStats
from factledger.collector.alerts.gauges import bounded_groups
from factledger.collector.metrics import MAX_LABEL_CHARS, MAX_LABEL_VALUES, OTHER, Metrics


def test_counters_and_gauges_render() -> None:
    metrics = Metrics()
    metrics.describe("factledger_spans_dropped_total", "Spans not accepted, by reason.")
    metrics.inc("factledger_spans_dropped_total", 3, reason="invalid_trace_id")
    metrics.inc("factledger_spans_dropped_total", reason='quote"d')
    metrics.gauge("factledger_queue_spans", "Spans waiting.", lambda: 7)
    text = metrics.render()
    assert "# TYPE factledger_spans_dropped_total counter" in text
    assert 'factledger_spans_dropped_total{reason="invalid_trace_id"} 3' in text
    assert 'factledger_spans_dropped_total{reason="quote\\"d"} 1' in text
    assert "# TYPE factledger_queue_spans gauge\nfactledger_queue_spans 7" in text
    assert metrics.total("factledger_spans_dropped_total") == 4


def test_a_failing_gauge_does_not_break_the_scrape() -> None:
    metrics = Metrics()
    metrics.gauge("factledger_broken", "Raises.", lambda: 1 / 0)
    metrics.inc("factledger_ok_total")
    assert "factledger_ok_total 1" in metrics.render()


def test_a_histogram_renders_cumulative_buckets_sum_and_count() -> None:
    metrics = Metrics()
    metrics.histogram("factledger_delay_seconds", "Delay.", [2, 0.5, 10])
    metrics.observe("factledger_delay_seconds", 0.5, 1.5, 2.0, 11.0)
    text = metrics.render()
    assert (
        "# HELP factledger_delay_seconds Delay.\n"
        "# TYPE factledger_delay_seconds histogram\n"
        'factledger_delay_seconds_bucket{le="0.5"} 1\n'
        'factledger_delay_seconds_bucket{le="2"} 3\n'
        'factledger_delay_seconds_bucket{le="10"} 3\n'
        'factledger_delay_seconds_bucket{le="+Inf"} 4\n'
        "factledger_delay_seconds_sum 15\n"
        "factledger_delay_seconds_count 4\n"
    ) in text
    assert metrics.observations("factledger_delay_seconds")[-1] == (float("inf"), 4)


def test_a_histogram_needs_finite_bounds_and_registration() -> None:
    metrics = Metrics()
    with pytest.raises(ValueError, match="finite bucket bounds"):
        metrics.histogram("factledger_bad_seconds", "Bad.", [1, float("inf")])
    with pytest.raises(ValueError, match="finite bucket bounds"):
        metrics.histogram("factledger_empty_seconds", "Empty.", [])
    with pytest.raises(KeyError):
        metrics.observe("factledger_unknown_seconds", 1.0)


# Every family whose label values come from span data, with the label a sender chooses.
SENDER_LABELLED = [
    pytest.param("factledger_turns_total", "model", id="turns-by-model"),
    pytest.param("factledger_findings_total", "kind", id="findings-by-kind"),
    pytest.param("factledger_spans_dropped_total", "reason", id="span-drops-by-reason"),
    pytest.param("factledger_assembly_drops_total", "reason", id="assembly-drops-by-reason"),
    pytest.param("factledger_requests_refused_total", "reason", id="refusals-by-reason"),
    pytest.param("factledger_rows_dropped_total", "table", id="row-drops-by-table"),
    pytest.param("factledger_agent_turns_total", "agent", id="any-new-family-by-agent"),
    pytest.param("factledger_service_spans_total", "service", id="any-new-family-by-service"),
]


@pytest.mark.parametrize(("family", "label"), SENDER_LABELLED)
def test_sender_chosen_label_values_are_bounded_in_every_family(family: str, label: str) -> None:
    metrics = Metrics(label_values=3)
    for n in range(10):
        metrics.inc(family, 1, **{label: f"value-{n}", "verdict": "pass"})
    metrics.inc(family, 1, **{label: "x" * 5000})
    text = metrics.render()
    series = [line for line in text.splitlines() if line.startswith(family + "{")]
    assert len(series) == 5, series  # three names kept, the rest under "other" (two keys)
    assert metrics.value(family, **{label: "value-0", "verdict": "pass"}) == 1
    assert metrics.value(family, **{label: OTHER, "verdict": "pass"}) == 7
    assert metrics.value(family, **{label: OTHER}) == 1
    assert "x" * (MAX_LABEL_CHARS + 1) not in text
    assert metrics.total(family) == 11


def test_the_label_bound_defaults_to_max_label_values() -> None:
    metrics = Metrics()
    for n in range(MAX_LABEL_VALUES + 50):
        metrics.inc("factledger_turns_total", model=f"m{n}")
    assert metrics.value("factledger_turns_total", model=OTHER) == 50
    assert metrics.value("factledger_turns_total", model="m0") == 1


def test_reject_rate_gauges_fold_models_past_the_bound_into_other() -> None:
    stats = {f"m{n}": GroupStats(turns=n + 1, hits=1) for n in range(5)}
    bounded = bounded_groups(stats, limit=2)
    assert bounded == {"m4": GroupStats(5, 1), "m3": GroupStats(4, 1), OTHER: GroupStats(6, 3)}
