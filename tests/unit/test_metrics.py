"""Metrics render in the Prometheus text format with escaped labels."""

from __future__ import annotations

import pytest

from factledger.collector.alerts.evaluator import GroupStats
from factledger.collector.alerts.gauges import bounded_groups
from factledger.collector.metric_catalogue import CATALOGUE, Catalogue, Family
from factledger.collector.metrics import (
    MAX_LABEL_CHARS,
    MAX_LABEL_VALUES,
    OTHER,
    GaugeFamily,
    Metrics,
    UndeclaredMetric,
)


def test_counters_and_gauges_render() -> None:
    metrics = Metrics()
    metrics.inc("factledger_spans_dropped_total", 3, reason="invalid_trace_id")
    metrics.inc("factledger_spans_dropped_total", reason='quote"d')
    metrics.gauge("factledger_queue_spans", lambda: 7)
    text = metrics.render()
    assert "# TYPE factledger_spans_dropped_total counter" in text
    assert 'factledger_spans_dropped_total{reason="invalid_trace_id"} 3' in text
    assert 'factledger_spans_dropped_total{reason="quote\\"d"} 1' in text
    assert "# HELP factledger_spans_dropped_total Spans not accepted, by reason." in text
    assert "# TYPE factledger_queue_spans gauge\nfactledger_queue_spans 7" in text
    assert metrics.total("factledger_spans_dropped_total") == 4


def test_a_failing_gauge_does_not_break_the_scrape() -> None:
    metrics = Metrics(
        Catalogue(
            [
                Family("factledger_broken", "gauge", "Raises."),
                Family("factledger_ok_total", "counter", "Counts."),
            ]
        )
    )
    metrics.gauge("factledger_broken", lambda: 1 / 0)
    metrics.inc("factledger_ok_total")
    assert "factledger_ok_total 1" in metrics.render()


def test_a_histogram_renders_cumulative_buckets_sum_and_count() -> None:
    delay = Family("factledger_delay_seconds", "histogram", "Delay.", buckets=(2, 0.5, 10))
    metrics = Metrics(Catalogue([delay]))
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


def test_a_histogram_needs_finite_bounds_and_declaration() -> None:
    bad = Family("factledger_bad_seconds", "histogram", "Bad.", buckets=(1, float("inf")))
    with pytest.raises(ValueError, match="finite bucket bounds"):
        Metrics(Catalogue([bad]))
    with pytest.raises(ValueError, match="finite bucket bounds"):
        Metrics(Catalogue([Family("factledger_empty_seconds", "histogram", "Empty.")]))
    with pytest.raises(KeyError):
        Metrics().observe("factledger_unknown_seconds", 1.0)


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
    metrics = Metrics(
        Catalogue([Family(family, "counter", "Counts.", (label, "verdict"))]), label_values=3
    )
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
    metrics = Metrics(
        Catalogue([Family("factledger_turns_total", "counter", "Turns.", ("model",))])
    )
    for n in range(MAX_LABEL_VALUES + 50):
        metrics.inc("factledger_turns_total", model=f"m{n}")
    assert metrics.value("factledger_turns_total", model=OTHER) == 50
    assert metrics.value("factledger_turns_total", model="m0") == 1


def test_reject_rate_gauges_fold_models_past_the_bound_into_other() -> None:
    stats = {f"m{n}": GroupStats(turns=n + 1, hits=1) for n in range(5)}
    bounded = bounded_groups(stats, limit=2)
    assert bounded == {"m4": GroupStats(5, 1), "m3": GroupStats(4, 1), OTHER: GroupStats(6, 3)}


def test_the_registry_refuses_names_and_labels_the_catalogue_lacks() -> None:
    metrics = Metrics()
    with pytest.raises(UndeclaredMetric, match="factledger_made_up_total"):
        metrics.inc("factledger_made_up_total")
    with pytest.raises(UndeclaredMetric, match="no label model"):
        metrics.inc("factledger_requests_refused_total", reason="queue_full", model="m")
    with pytest.raises(UndeclaredMetric, match="gauge factledger_spans_stored_total"):
        metrics.gauge("factledger_spans_stored_total", lambda: 1)
    with pytest.raises(UndeclaredMetric):
        metrics.render([GaugeFamily("factledger_made_up", "Made up.", (("", 1.0),))])
    assert metrics.total("factledger_requests_refused_total") == 0


def test_every_declared_family_is_on_the_first_scrape_with_help_and_type() -> None:
    text = Metrics().render()
    for family in CATALOGUE:
        assert f"# HELP {family.name} {family.help}\n# TYPE {family.name} {family.type}\n" in text
    assert "factledger_turns_failed_total 0\n" in text
    for transport in ("grpc", "http"):
        labels = f'reason="wal_unavailable",transport="{transport}"'
        assert f"factledger_requests_refused_total{{{labels}}} 0\n" in text
    assert 'factledger_rows_dropped_total{reason="unstorable",table="findings"} 0\n' in text
    assert 'factledger_verdict_delay_seconds_bucket{le="+Inf"} 0\n' in text


def test_a_counted_series_replaces_its_zero() -> None:
    metrics = Metrics()
    metrics.inc("factledger_requests_refused_total", 2, reason="queue_full", transport="grpc")
    text = metrics.render()
    assert 'factledger_requests_refused_total{reason="queue_full",transport="grpc"} 2\n' in text
    assert 'factledger_requests_refused_total{reason="queue_full",transport="grpc"} 0' not in text
    assert 'factledger_requests_refused_total{reason="queue_full",transport="http"} 0\n' in text


def test_gauges_read_elsewhere_merge_under_one_help_line() -> None:
    samples = [
        GaugeFamily("factledger_reject_rate", "Per model.", (('{model="a",tenant="x"}', 0.5),)),
        GaugeFamily("factledger_reject_rate", "Per model.", (('{model="a",tenant="y"}', 0.25),)),
    ]
    text = Metrics().render(samples)
    assert text.count("# HELP factledger_reject_rate ") == 1
    assert (
        "# HELP factledger_reject_rate Per model.\n"
        "# TYPE factledger_reject_rate gauge\n"
        'factledger_reject_rate{model="a",tenant="x"} 0.5\n'
        'factledger_reject_rate{model="a",tenant="y"} 0.25\n'
    ) in text
