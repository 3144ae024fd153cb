"""The access log's path filter: a secret in a request target is redacted however the
client percent-encoded it, and a target without one is logged exactly as sent."""

from __future__ import annotations

import logging

import pytest

from factledger.collector.access_log import RedactedPaths
from factledger.collector.redaction import Redactor

FILTER = RedactedPaths(Redactor.default().text)

ENCODED = {
    "a connection string": (
        "/api/v1/turns?conversation_id=DefaultEndpointsProtocol%3Dhttps%3BAccountName%3Dacme"
        "%3BAccountKey%3DC0rpusAzureStorageKey0123456789abcdef%3D%3D",
        "C0rpusAzureStorageKey0123456789",
    ),
    "a netrc line, spaces as plus": (
        "/api/v1/turns?conversation_id=machine+api.example.com+login+ana+password+C0rpusNetrcPw%0A",
        "C0rpusNetrcPw",
    ),
    "a url in a query value": (
        "/api/v1/turns?conversation_id=https%3A%2F%2Fexample.com%2Fcb%3Faccess_token%3DC0rpusQTok99",
        "C0rpusQTok99",
    ),
    "a database url": (
        "/api/v1/turns?q=postgres%3A%2F%2Fapp%3AC0rpusDbUrlPw%40db%2Fshop",
        "C0rpusDbUrlPw",
    ),
    "a key in the path": ("/api/v1/turns/DB_PASSWORD%3DC0rpusEnvDbPw", "C0rpusEnvDbPw"),
}


def _logged(path: str) -> str:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", path, "1.1", 200),
        None,
    )
    assert FILTER.filter(record)
    return record.getMessage()


@pytest.mark.parametrize(("path", "secret"), ENCODED.values(), ids=ENCODED.keys())
def test_a_percent_encoded_secret_is_redacted(path: str, secret: str) -> None:
    logged = _logged(path)
    assert secret not in logged
    assert "REDACTED" in logged and "\n" not in logged


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/turns?verdict=reject&verdict=flag&limit=500",
        "/api/v1/turns?conversation_id=conv%2042&q=a+b",
        "/api/v1/snapshots/88bc9335e193650a2f4647c6cceeb73d25cf51b7acdd1425774a9dbbcdaf132c",
    ],
)
def test_a_target_without_a_secret_is_logged_as_sent(path: str) -> None:
    assert f" {path} " in _logged(path)
