"""Secrets the service did not receive as spans: a webhook's answer to an alert notice
(recorded and logged when delivery fails) and a request's query string (in the access
log) are redacted like everything stored."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from factledger.collector.alerts.notifier import DeliveryAttempt, Notifier
from factledger.collector.alerts.rules import DeliverySettings
from factledger.collector.http_server import server_config
from factledger.collector.settings import ServiceSettings

_KEY = "sk-proj-AnswerLeakKeyAbcdef0123456"
_ANSWER = f'{{"error": "upstream refused", "config": {{"password": "W3bh00kPw", "key": "{_KEY}"}}}}'


@pytest.fixture
def failing_webhook() -> Iterator[str]:
    """A webhook on loopback answering 500 with a body holding credentials."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = _ANSWER.encode()
            self.send_response(500)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook"
    finally:
        server.shutdown()
        server.server_close()


def test_a_webhook_answer_with_credentials_is_recorded_and_logged_redacted(
    failing_webhook: str, caplog: pytest.LogCaptureFixture
) -> None:
    attempts: list[DeliveryAttempt] = []
    settings = DeliverySettings(attempts=1)
    notifier = Notifier(attempts.append, settings)
    notifier.start()
    try:
        with caplog.at_level(logging.WARNING, logger="factledger.alerts"):
            assert notifier.submit("alert-1", failing_webhook, {"text": "reject rate high"})
            assert notifier.force_flush(10)
    finally:
        notifier.shutdown()
    assert [a.status_code for a in attempts] == [500]
    recorded = attempts[0].error
    assert "upstream refused" in recorded and "[REDACTED:" in recorded
    for secret in ("W3bh00kPw", "AnswerLeakKey"):
        assert secret not in recorded
        assert secret not in caplog.text
    assert "delivery to" in caplog.text


def test_the_access_log_shows_query_strings_redacted(caplog: pytest.LogCaptureFixture) -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzaWQiOiJhY2Nlc3MifQ.QWNjZXNzTG9nU2lnbmF0dXJl"
    server_config(object(), ServiceSettings())
    access = logging.getLogger("uvicorn.access")  # uvicorn's own: it does not propagate
    access.addHandler(caplog.handler)
    try:
        for path in (f"/api/v1/turns?q={_KEY}", f"/api/v1/turns?conversation_id={jwt}"):
            access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", path, "1.1", 200)
    finally:
        access.removeHandler(caplog.handler)
    assert "GET /api/v1/turns?q=[REDACTED:openai_key] HTTP/1.1" in caplog.text
    assert "AnswerLeakKey" not in caplog.text and "QWNjZXNzTG9nU2lnbmF0dXJl" not in caplog.text
