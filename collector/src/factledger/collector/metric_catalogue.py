"""Every metric family of the service, declared once: name, type, help, labels.

`collector.metrics.Metrics` takes no name the catalogue lacks, and renders every family
from start-up: a family whose labels all have `known` values shows a zero series for
each combination, any other shows its HELP and TYPE lines until it has a sample. The
reasons of `factledger_requests_refused_total` are those the refusal classes declare
(`collector.refusals`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from factledger.collector.refusals import (
    PipelineFull,
    Refusal,
    RequestTooLarge,
    StoreUnavailable,
    WalUnavailable,
    declared_outcome,
    refusal_classes,
)
from factledger.processors.kinds import Kind
from factledger.processors.verification.base import VerificationOutcome

FamilyType = Literal["counter", "gauge", "histogram"]

Transport = Literal["http", "grpc"]
"""How an export request came in (OTLP/HTTP or OTLP/gRPC): the `transport` label of the
receivers' counters."""
TRANSPORTS: tuple[Transport, ...] = ("grpc", "http")


@dataclass(frozen=True)
class Family:
    """One declared metric family."""

    name: str
    type: FamilyType
    help: str
    labels: tuple[str, ...] = ()
    """The label names a sample may carry (a sample may leave some out)."""
    known: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Values a label takes that are known before anything happens (reasons, workers)."""
    buckets: tuple[float, ...] = ()
    """A histogram's bucket upper bounds, ascending and finite; +Inf is implied."""

    def zero_series(self) -> Iterator[tuple[tuple[str, str], ...]]:
        """The label sets shown with 0 before they are counted: the one empty set of an
        unlabelled counter, or every combination of known values when every label has
        known values."""
        if any(label not in self.known for label in self.labels):
            return
        names = sorted(self.labels)
        for values in itertools.product(*(self.known[name] for name in names)):
            yield tuple(zip(names, values, strict=True))


class Catalogue:
    """Declared families by name."""

    def __init__(self, families: Iterable[Family]) -> None:
        self._families: dict[str, Family] = {}
        for family in families:
            if family.name in self._families:
                raise ValueError(f"metric {family.name} is declared twice")
            self._families[family.name] = family

    def __contains__(self, name: object) -> bool:
        return name in self._families

    def __iter__(self) -> Iterator[Family]:
        return iter(self._families.values())

    def __getitem__(self, name: str) -> Family:
        return self._families[name]

    def get(self, name: str) -> Family | None:
        return self._families.get(name)


def _reasons(*classes: type[Refusal]) -> tuple[str, ...]:
    """The distinct metric reasons the refusal classes declare, in their order."""
    outcomes = (declared_outcome(cls) for cls in classes)
    return tuple(dict.fromkeys(outcome.reason for outcome in outcomes if outcome))


VERDICT_DELAY = "factledger_verdict_delay_seconds"
VERDICT_DELAY_BUCKETS = (0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10, 12.5, 15, 20, 30, 45, 60, 120, 300)
"""Fine around the default grace period (2 s), coarse where a pipeline has fallen behind."""

EXPORT_DROP_REASONS = ("outbox_full", "gave_up", "refused", "unreadable", "outbox_unavailable")
"""Why a verdict record was never delivered (`collector.export.lane`)."""

_TABLES = ("spans", "turns", "findings", "verifications", "snapshots", "turn_evidence")

CATALOGUE = Catalogue(
    [
        # --- ingest --------------------------------------------------------------------
        Family(
            "factledger_spans_received_total",
            "counter",
            "Spans accepted by the receivers, by transport (http: OTLP/HTTP, grpc: OTLP/gRPC).",
            ("transport",),
            {"transport": TRANSPORTS},
        ),
        Family("factledger_spans_stored_total", "counter", "Spans written to the store."),
        Family(
            "factledger_spans_dropped_total",
            "counter",
            "Spans not accepted, by reason.",
            ("reason",),
        ),
        Family(
            "factledger_log_records_dropped_total",
            "counter",
            "Log records (POST /v1/logs) not accepted, by reason (no_span, ...).",
            ("reason",),
        ),
        Family(
            "factledger_spans_refused_total",
            "counter",
            "Spans of requests refused whole and not acknowledged (503: the client retries;"
            " 413: more spans than the backlog bound), by reason; not drops.",
            ("reason",),
            {"reason": _reasons(RequestTooLarge, StoreUnavailable, PipelineFull, WalUnavailable)},
        ),
        Family(
            "factledger_requests_refused_total",
            "counter",
            "Export requests refused whole (4xx, or 503 with Retry-After; over gRPC the"
            " matching status), by reason (the HTTP status for a bad request, else why the"
            " service could not take it) and transport.",
            ("reason", "transport"),
            {"reason": _reasons(*refusal_classes()), "transport": TRANSPORTS},
        ),
        Family(
            "factledger_bodies_in_flight_bytes",
            "gauge",
            "Bytes of request bodies being read or decoded now.",
        ),
        # --- write-ahead log and recovery ------------------------------------------------
        Family(
            "factledger_wal_records_unreadable_total",
            "counter",
            "Write-ahead log records that no longer decode at replay, skipped.",
        ),
        Family(
            "factledger_wal_replayed_spans_total",
            "counter",
            "Spans read back from the write-ahead log at start-up.",
        ),
        Family(
            "factledger_recovered_spans_total",
            "counter",
            "Stored spans no verdict holds, read back from the store to be judged.",
        ),
        # --- queues and storage ----------------------------------------------------------
        Family("factledger_queue_spans", "gauge", "Spans accepted but not yet stored."),
        Family(
            "factledger_queue_bytes",
            "gauge",
            "Request bytes behind the spans not yet stored or assembled (bounded by"
            " FACTLEDGER_QUEUE_BYTES).",
        ),
        Family(
            "factledger_assembly_queue_spans",
            "gauge",
            "Spans stored but not yet assembled into turns.",
        ),
        Family("factledger_open_turns", "gauge", "Turns being assembled."),
        Family(
            "factledger_store_errors_total",
            "counter",
            "Inserts the store could not take now (unreachable, full disk), by table; the rows"
            " are held and the insert retried.",
            ("table",),
            {"table": _TABLES},
        ),
        Family(
            "factledger_rows_dropped_total",
            "counter",
            "Rows the store refuses for good (bad data), found by halving the batch and"
            " dropped, by table and reason.",
            ("table", "reason"),
            {"table": _TABLES, "reason": ("unstorable",)},
        ),
        Family(
            "factledger_worker_errors_total",
            "counter",
            "Unforeseen errors a pipeline thread survived, by thread.",
            ("worker",),
            {"worker": ("recovery", "span-writer", "turn-processor")},
        ),
        # --- judging ---------------------------------------------------------------------
        Family(
            "factledger_turns_validated_total",
            "counter",
            "Turns judged, by verdict and model.",
            ("verdict", "model"),
        ),
        Family(
            "factledger_clock_skewed_turns_total",
            "counter",
            "Turns from agents whose clocks were off beyond the bound (2 hours), counted at"
            " the time they were received, by service.",
            ("service",),
        ),
        Family(
            "factledger_turns_failed_total",
            "counter",
            "Turns that could not be judged (an error in validation or shaping rows).",
        ),
        Family(
            "factledger_findings_total",
            "counter",
            "Findings reported, by kind.",
            ("kind",),
            {"kind": tuple(kind.value for kind in Kind)},
        ),
        Family(
            "factledger_assembly_drops_total",
            "counter",
            "Spans or turns turn assembly set aside, by reason (duplicate, group_full, ...).",
            ("reason",),
        ),
        Family(
            "factledger_traces_without_turn_total",
            "counter",
            "Traces none of whose spans FactLedger could read as part of a turn within the"
            " maximum wait, by service and instrumentation scope.",
            ("service", "scope"),
        ),
        Family(
            "factledger_judge_worker_hangs_total",
            "counter",
            "Judge workers killed for owing results and answering nothing.",
        ),
        Family(
            "factledger_judge_worker_restarts_total",
            "counter",
            "Times a judge worker process died and was restarted.",
        ),
        Family(
            VERDICT_DELAY,
            "histogram",
            "Seconds from a turn's end to its first verdict stored (grace period included).",
            buckets=VERDICT_DELAY_BUCKETS,
        ),
        # --- verdict export (collector.export) -------------------------------------------
        Family(
            "factledger_export_sent_total",
            "counter",
            "Verdict records a target took, by target.",
            ("target",),
        ),
        Family(
            "factledger_export_retried_total",
            "counter",
            "Verdict records sent again after a target was down, slow or throttling, by target.",
            ("target",),
        ),
        Family(
            "factledger_export_dropped_total",
            "counter",
            "Verdict records never delivered, by target and reason (outbox_full: over the"
            " outbox bounds; gave_up: pending past the give-up time; refused: the target"
            " rejects them; unreadable: a stored record that no longer decodes;"
            " outbox_unavailable: the outbox's disk refused the write).",
            ("target", "reason"),
            {"reason": EXPORT_DROP_REASONS},
        ),
        Family(
            "factledger_export_pending",
            "gauge",
            "Verdict records in the outbox, not yet delivered, by target.",
            ("target",),
        ),
        Family(
            "factledger_export_lag_seconds",
            "gauge",
            "Seconds the oldest pending verdict record has waited, by target.",
            ("target",),
        ),
        # --- verification ----------------------------------------------------------------
        Family(
            "factledger_verifications_total",
            "counter",
            "Answers of the sources of truth about the names of verdicts, by source (trace,"
            " git, link, workspace, plugin, none) and outcome (confirmed, refuted,"
            " unverifiable).",
            ("source", "outcome"),
            {"outcome": tuple(outcome.value for outcome in VerificationOutcome)},
        ),
        Family(
            "factledger_verification_findings_total",
            "counter",
            "Findings a verification settled, by kind and outcome: confirmed ones proven"
            " (an alert can key on them), refuted ones withdrawn.",
            ("kind", "outcome"),
        ),
        Family(
            "factledger_verification_requests_total",
            "counter",
            "Turns sent to verification, by what became of them (settled: a new verdict"
            " version; unsettled: no source answered; retried: a source was down or slow;"
            " dropped: the queue was full).",
            ("result",),
            {"result": ("settled", "unsettled", "retried", "dropped")},
        ),
        Family(
            "factledger_verifications_stale_total",
            "counter",
            "Verification answers for a version that a later one replaced meanwhile (kept"
            " for the later versions, which apply them).",
        ),
        Family(
            "factledger_verification_queue_turns",
            "gauge",
            "Turns waiting for verification (retries included).",
        ),
        # --- alerts ----------------------------------------------------------------------
        Family(
            "factledger_alert_evaluations_total",
            "counter",
            "Alert rule evaluations, by outcome.",
            ("outcome",),
            {"outcome": ("ok", "error")},
        ),
        Family(
            "factledger_alert_notices_total",
            "counter",
            "Alert notices recorded, by state.",
            ("state",),
            {"state": ("firing", "repeat", "resolved")},
        ),
        Family(
            "factledger_alert_deliveries_total",
            "counter",
            "Webhook delivery attempts of alert notices, by outcome.",
            ("outcome",),
            {"outcome": ("ok", "retry", "failed", "dropped")},
        ),
        # Read from the alert loops at scrape time; the samples' HELP names the window.
        Family(
            "factledger_alert_firing",
            "gauge",
            "1 for every (rule, group) whose alert is firing.",
            ("rule", "key", "tenant"),
        ),
        Family(
            "factledger_reject_rate",
            "gauge",
            "Rejected over validated turns over the alert window, per model.",
            ("model", "tenant"),
        ),
        Family(
            "factledger_flag_rate",
            "gauge",
            "Turns flagged for human verification over validated turns over the alert"
            " window, per model.",
            ("model", "tenant"),
        ),
        Family(
            "factledger_window_turns",
            "gauge",
            "Validated turns over the alert window, per model.",
            ("model", "tenant"),
        ),
    ]
)
