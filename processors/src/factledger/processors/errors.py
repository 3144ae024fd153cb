"""The base of every error FactLedger raises on purpose, and the processing layer's own.

FactLedgerError
 ├── TranscriptError      a transcript cannot be read as a turn
 ├── ConfigError          a settings or claim-rules file is invalid
 ├── Refusal              an export request refused whole (collector.refusals: each
 │                        declares retryable, HTTP status, gRPC status, metric reason)
 ├── StoreError           a ClickHouse call failed (collector.store)
 ├── WorkerDied           a judge worker process is gone (collector.judge.worker_process)
 ├── TurnTimeLimit        judging a turn took too long (collector.judge.time_limit)
 ├── UndeclaredMetric     a metric the catalogue lacks (collector.metrics)
 ├── ExportError          a replay export failed (factledger.replay)
 ├── PortUnavailable      a port cannot be bound (factledger.ports)
 └── ApiError             the query API answered an error (dashboard.client)
"""

from __future__ import annotations


class FactLedgerError(Exception):
    """Base of every error FactLedger raises on purpose."""


class TranscriptError(FactLedgerError, ValueError):
    """A transcript is not a readable OpenAI-style chat; the message says where."""


class ConfigError(FactLedgerError, ValueError):
    """A settings or claim-rules file is invalid; the message names the file and key."""
