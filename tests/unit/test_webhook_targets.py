"""Where alert notices may go: any http(s) webhook the rules file names (public, private
or loopback: an operator's relay, Alertmanager, a local receiver), except the cloud
metadata services, refused by name or address when the file is loaded and, after
resolving the name, at every delivery."""

from __future__ import annotations

import threading
from datetime import timedelta

import httpx
import pytest

from factledger.collector.alerts.notifier import DeliveryAttempt, Notifier
from factledger.collector.alerts.rules import DeliverySettings, alert_config_from_mapping
from factledger.collector.alerts.webhook_targets import refusal
from factledger.processors.errors import ConfigError

METADATA_URLS = [
    pytest.param("http://169.254.169.254/latest/meta-data/", id="aws and most clouds"),
    pytest.param("http://[fd00:ec2::254]/latest/", id="aws over ipv6"),
    pytest.param("http://metadata.google.internal/computeMetadata/v1/", id="gcp by name"),
    pytest.param("http://METADATA.google.internal./x", id="gcp by name, any case, rooted"),
    pytest.param("http://100.100.100.200/latest/meta-data/", id="alibaba"),
    pytest.param("http://[::ffff:169.254.169.254]/", id="ipv4-mapped metadata"),
    pytest.param("http://169.254.170.2/v2/credentials", id="ecs task credentials"),
]
ALLOWED_URLS = [
    pytest.param("http://127.0.0.1:9000/alerts", id="loopback"),
    pytest.param("http://10.0.0.7/hook", id="private"),
    pytest.param("https://hooks.slack.com/services/T0/B0/x", id="public name"),
]


def _config(url: str) -> None:
    alert_config_from_mapping({"webhooks": [{"url": url}]}, source=None)


@pytest.mark.parametrize("url", METADATA_URLS)
def test_a_metadata_webhook_is_refused_when_the_rules_load(url: str) -> None:
    with pytest.raises(ConfigError, match="cloud metadata"):
        _config(url)


@pytest.mark.parametrize("url", ALLOWED_URLS)
def test_other_webhooks_load(url: str) -> None:
    _config(url)


def test_a_name_resolving_to_metadata_is_refused_at_delivery() -> None:
    def resolve(host: str, port: int) -> list[str]:
        return ["93.184.215.14", "169.254.169.254"] if host == "hooks.example" else []

    assert refusal("https://hooks.example/x", resolve) == (
        "hooks.example resolves to 169.254.169.254: cloud metadata"
    )
    assert refusal("http://127.0.0.1:9/x", resolve) is None


def test_the_notifier_never_sends_to_a_metadata_address_nor_retries() -> None:
    sent: list[str] = []
    done = threading.Event()
    attempts: list[DeliveryAttempt] = []

    def record(attempt: DeliveryAttempt) -> None:
        attempts.append(attempt)
        done.set()

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        return httpx.Response(200)

    settings = DeliverySettings(attempts=3, backoff=timedelta(milliseconds=10))
    notifier = Notifier(
        record,
        settings,
        transport=httpx.MockTransport(handler),
        resolve=lambda host, port: ["169.254.169.254"],
    )
    notifier.start()
    try:
        assert notifier.submit("a1", "http://rebound.example/hook", {"x": 1})
        assert done.wait(5)
        assert notifier.force_flush(5)
    finally:
        notifier.shutdown()
    assert sent == []
    assert [(a.ok, a.attempt) for a in attempts] == [(False, 1)]
    assert "cloud metadata" in attempts[0].error
