"""Every export target against loopback servers that fail: one behaviour a test, run over
each target (throttled, failing, refusing, silent, absent)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from factledger.collector.export import datadog, langfuse, mlflow, phoenix
from factledger.collector.export.base import ExportTarget, TargetRefused, TargetUnavailable
from factledger.service_process import free_port
from tests.integration.export_records import record
from tests.integration.recording_server import Answer, RecordingServer

FACTORIES: dict[str, Callable[[str], ExportTarget]] = {
    "phoenix": lambda url: phoenix.build({"endpoint": url}),
    "mlflow": lambda url: mlflow.build({"tracking_uri": url}),
    "langfuse": lambda url: langfuse.build({"host": url, "public_key": "p", "secret_key": "s"}),
    "datadog": lambda url: datadog.build({"endpoint": url, "api_key": "k"}),
}

TARGETS = pytest.mark.parametrize("name", list(FACTORIES))


@TARGETS
@pytest.mark.parametrize("status", [429, 503])
def test_throttled_or_failing_is_retryable_with_its_retry_after(name: str, status: int) -> None:
    server = RecordingServer([Answer(status, {"error": "busy"}, (("Retry-After", "17"),))])
    target = FACTORIES[name](server.url)
    try:
        with pytest.raises(TargetUnavailable) as raised:
            target.deliver([record()], 5)
        assert raised.value.retry_after_seconds == 17.0
        assert str(status) in raised.value.reason
    finally:
        target.shutdown()
        server.close()


@TARGETS
def test_bad_credentials_are_refused(name: str) -> None:
    server = RecordingServer([Answer(401, {"error": "Unauthorized"})])
    target = FACTORIES[name](server.url)
    try:
        with pytest.raises(TargetRefused, match="401"):
            target.deliver([record()], 5)
    finally:
        target.shutdown()
        server.close()


@TARGETS
def test_a_server_that_never_answers_is_unavailable_within_the_timeout(name: str) -> None:
    server = RecordingServer(hang=True)
    target = FACTORIES[name](server.url)
    try:
        started = time.monotonic()
        with pytest.raises(TargetUnavailable, match="in time"):
            target.deliver([record(), record(turn_id="turn-2")], timeout_seconds=0.5)
        assert time.monotonic() - started < 2.0
    finally:
        target.shutdown()
        server.close()


@TARGETS
def test_nothing_listening_is_unavailable(name: str) -> None:
    port = free_port()  # nothing listens on it
    target = FACTORIES[name](f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(TargetUnavailable, match="could not be reached"):
            target.deliver([record()], 2)
    finally:
        target.shutdown()
