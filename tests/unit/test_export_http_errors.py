"""The one table of HTTP answers of the export targets, and their settings' errors."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from factledger.collector.export import datadog, langfuse, mlflow, phoenix
from factledger.collector.export.base import ExportTarget, TargetRefused, TargetUnavailable
from factledger.collector.export.http_errors import error_for_status, parse_retry_after

TABLE = [
    pytest.param(200, {}, None, None, id="200 taken"),
    pytest.param(202, {}, None, None, id="202 taken"),
    pytest.param(204, {}, None, None, id="204 taken"),
    pytest.param(400, {}, TargetRefused, None, id="400 bad payload refused"),
    pytest.param(401, {}, TargetRefused, None, id="401 credentials refused"),
    pytest.param(403, {}, TargetRefused, None, id="403 forbidden refused"),
    pytest.param(404, {}, TargetRefused, None, id="404 refused"),
    pytest.param(409, {}, TargetRefused, None, id="409 refused"),
    pytest.param(413, {}, TargetRefused, None, id="413 too large refused"),
    pytest.param(422, {}, TargetRefused, None, id="422 unprocessable refused"),
    pytest.param(302, {}, TargetRefused, None, id="a redirect is a misplaced endpoint"),
    pytest.param(408, {}, TargetUnavailable, None, id="408 retried"),
    pytest.param(429, {"retry-after": "7"}, TargetUnavailable, 7.0, id="429 with Retry-After"),
    pytest.param(429, {}, TargetUnavailable, None, id="429 without Retry-After"),
    pytest.param(500, {}, TargetUnavailable, None, id="500 retried"),
    pytest.param(502, {}, TargetUnavailable, None, id="502 retried"),
    pytest.param(503, {"retry-after": "30"}, TargetUnavailable, 30.0, id="503 with Retry-After"),
    pytest.param(504, {}, TargetUnavailable, None, id="504 retried"),
    pytest.param(599, {}, TargetUnavailable, None, id="any 5xx retried"),
]


@pytest.mark.parametrize(("status", "headers", "error", "retry_after"), TABLE)
def test_an_answer_maps_to_one_outcome(
    status: int, headers: dict[str, str], error: type | None, retry_after: float | None
) -> None:
    found = error_for_status("target", status, headers)
    if error is None:
        assert found is None
        return
    assert type(found) is error
    assert found is not None and "HTTP " + str(status) in found.reason
    if isinstance(found, TargetUnavailable):
        assert found.retry_after_seconds == retry_after


def test_a_target_may_read_a_status_as_passing() -> None:
    assert isinstance(error_for_status("phoenix", 404, {}, {404}), TargetUnavailable)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param("", None, id="empty"),
        pytest.param("12", 12.0, id="delta seconds"),
        pytest.param("999999", 3600.0, id="capped at an hour"),
        pytest.param("Wed, 21 Oct 2015 07:28:30 GMT", 30.0, id="an HTTP date"),
        pytest.param("Wed, 21 Oct 2015 07:27:00 GMT", 0.0, id="an HTTP date gone by"),
        pytest.param("soon", None, id="unreadable"),
    ],
)
def test_retry_after(value: str | None, seconds: float | None) -> None:
    now = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert parse_retry_after(value, now=lambda: now) == seconds


BUILDERS: dict[str, tuple[Callable[[Mapping[str, object]], ExportTarget], dict[str, object]]] = {
    "phoenix": (phoenix.build, {"endpoint": "http://127.0.0.1:6006"}),
    "mlflow": (mlflow.build, {"tracking_uri": "http://127.0.0.1:5000"}),
    "langfuse": (langfuse.build, {"public_key": "pk-lf-1", "secret_key": "sk-lf-secret"}),
    "datadog": (datadog.build, {"api_key": "dd-secret-key"}),
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_build_takes_its_settings_table(name: str) -> None:
    build, options = BUILDERS[name]
    target = build(options)
    assert target.name == name
    target.shutdown()
    target.shutdown()


BAD = [
    pytest.param("phoenix", "endpoint", "ftp://secret-host", id="phoenix endpoint not http"),
    pytest.param("mlflow", "tracking_uri", 5000, id="mlflow tracking_uri not a string"),
    pytest.param("langfuse", "secret_key", None, id="langfuse secret_key missing"),
    pytest.param("langfuse", "host", "  ", id="langfuse host blank"),
    pytest.param("datadog", "api_key", None, id="datadog api_key missing"),
    pytest.param("datadog", "endpoint", "not a url", id="datadog endpoint not a URL"),
]


@pytest.mark.parametrize(("name", "key", "value"), BAD)
def test_a_bad_option_names_its_key_and_never_its_value(name: str, key: str, value: object) -> None:
    build, options = BUILDERS[name]
    bad = {k: v for k, v in options.items() if k != key}
    if value is not None:
        bad[key] = value
    with pytest.raises(ValueError) as raised:
        build(bad)
    message = str(raised.value)
    assert repr(key) in message
    values = (*bad.values(), value)
    for secret in [v for v in values if isinstance(v, str) and v.strip()]:
        assert secret not in message
