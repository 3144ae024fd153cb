"""Alert rules files: the built-in default, every key read, and a ConfigError naming the
key for each kind of mistake; durations and redacted webhook URLs."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from factledger.collector.alerts.rules import (
    DEFAULT_RULE,
    AlertConfig,
    AlertRule,
    DeliverySettings,
    Webhook,
    format_duration,
    load_alert_config,
    parse_duration,
    redact_url,
)
from factledger.processors.errors import ConfigError, FactLedgerError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "alerts.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_gives_the_built_in_rule() -> None:
    config = load_alert_config(None)
    assert config == AlertConfig()
    assert config.source is None
    (rule,) = config.rules
    assert rule == DEFAULT_RULE
    assert (rule.group_by, rule.verdict, rule.window) == ("model", "reject", timedelta(minutes=15))
    assert (rule.threshold, rule.baseline_factor, rule.baseline_windows) == (0.3, 2.0, 4)
    assert (rule.min_turns, rule.cooldown, rule.webhooks) == (20, timedelta(hours=1), ())


def test_every_key_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
dashboard_url = "http://127.0.0.1:8501"
webhooks = [{ url = "http://hooks.local/shared" }]

[delivery]
attempts = 3
backoff = "500ms"
timeout = 2.5

[[rules]]
name = "agents"
group_by = "agent"
verdict = "any"
window = "1h30m"
threshold = 0.5
baseline_factor = 3
baseline_windows = 2
min_turns = 50
min_rate = 0.1
cooldown = "2h"
webhooks = [
  { url = "https://hooks.slack.com/services/T0/B0/xyz", format = "slack" },
  { url = "http://127.0.0.1:9000/alerts", format = "json" },
]

[[rules]]
name = "kinds"
group_by = "kind"
threshold = false
""",
    )
    config = load_alert_config(path)
    assert config.source == path
    assert config.dashboard_url == "http://127.0.0.1:8501"
    assert config.delivery == DeliverySettings(
        attempts=3, backoff=timedelta(milliseconds=500), timeout=timedelta(seconds=2.5)
    )
    agents, kinds = config.rules
    assert agents == AlertRule(
        name="agents",
        group_by="agent",
        verdict="any",
        window=timedelta(minutes=90),
        threshold=0.5,
        baseline_factor=3.0,
        baseline_windows=2,
        min_turns=50,
        min_rate=0.1,
        cooldown=timedelta(hours=2),
        webhooks=(
            Webhook("https://hooks.slack.com/services/T0/B0/xyz", "slack"),
            Webhook("http://127.0.0.1:9000/alerts", "json"),
        ),
    )
    assert kinds.threshold is None
    assert kinds.baseline_factor == DEFAULT_RULE.baseline_factor
    assert kinds.webhooks == (Webhook("http://hooks.local/shared"),), "shared webhooks apply"
    assert config.rule("kinds") is kinds
    assert config.rule("nope") is None


def test_a_file_without_rules_sends_the_default_rule_to_its_webhooks(tmp_path: Path) -> None:
    config = load_alert_config(write(tmp_path, 'webhooks = [{url = "http://h/x"}]\n'))
    (rule,) = config.rules
    assert rule.name == DEFAULT_RULE.name
    assert rule.webhooks == (Webhook("http://h/x"),)


def test_rule_as_json_shows_durations_and_hides_webhook_paths() -> None:
    rule = AlertRule(name="r", webhooks=(Webhook("https://hooks.slack.com/services/T/B/s"),))
    shown = rule.as_json()
    assert shown["window"] == "15m"
    assert shown["window_seconds"] == 900
    assert shown["cooldown"] == "1h"
    assert shown["webhooks"][0]["url"].startswith("https://hooks.slack.com/… #")
    assert "services" not in str(shown)


RULE = '[[rules]]\nname = "r"\n'


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("colour = 1\n", "colour"),
        (RULE + "windw = '15m'\n", "windw"),
        ("[[rules]]\ngroup_by = 'model'\n", "rules[0].name"),
        ("[[rules]]\nname = 'has space'\n", "rules[0].name"),
        (RULE + "group_by = 'tenant'\n", "group_by"),
        (RULE + "verdict = 'pass'\n", "verdict"),
        (RULE + "window = '7s'\n", "window"),
        (RULE + "window = '90s'\n", "window"),
        (RULE + "window = '2d'\n", "window"),
        (RULE + "window = 'soon'\n", "window"),
        (RULE + "window = '1d'\nbaseline_windows = 10\n", "baseline_windows"),
        (RULE + "threshold = 1.5\n", "threshold"),
        (RULE + "threshold = 0\n", "threshold"),
        (RULE + "threshold = '30%'\n", "threshold"),
        (RULE + "threshold = false\nbaseline_factor = false\n", "threshold and baseline_factor"),
        (RULE + "baseline_factor = 1.0\n", "baseline_factor"),
        (RULE + "baseline_windows = 0\n", "baseline_windows"),
        (RULE + "min_turns = 0\n", "min_turns"),
        (RULE + "min_turns = 2.5\n", "min_turns"),
        (RULE + "min_rate = 2\n", "min_rate"),
        (RULE + "cooldown = '8d'\n", "cooldown"),
        (RULE + "cooldown = -1\n", "cooldown"),
        (RULE + "webhooks = 'http://h'\n", "webhooks"),
        (RULE + "webhooks = [{format = 'json'}]\n", "webhooks[0].url"),
        (RULE + "webhooks = [{url = 'http://h', format = 'teams'}]\n", "webhooks[0].format"),
        (RULE + "webhooks = [{url = 'ftp://h'}]\n", "webhooks[0].url"),
        (RULE + "webhooks = [{url = 'http://h', token = 'x'}]\n", "token"),
        ("webhooks = [{url = 'nope'}]\n", "webhooks[0].url"),
        ("dashboard_url = 3\n", "dashboard_url"),
        ("rules = 3\n", "rules"),
        (RULE + RULE, "unique"),
        ("[delivery]\nattempts = 0\n", "attempts"),
        ("[delivery]\nattempts = 21\n", "attempts"),
        ("[delivery]\nbackoff = 0\n", "backoff"),
        ("[delivery]\ntimeout = '5m'\n", "timeout"),
        ("[delivery]\nretries = 3\n", "retries"),
        ("delivery = 3\n", "[delivery]"),
        ("[[rules]\n", "alerts.toml"),
        ("tenants = 3\n", "tenants must be a table"),
        ("[tenants]\nacme = 3\n", "tenants.acme"),
        ("[tenants.acme]\nrule = []\n", "rule"),
        ("[tenants.acme]\nwebhooks = [{url = 'nope'}]\n", "tenants.acme.webhooks[0].url"),
        ("[[tenants.acme.rules]]\nname = 'x'\nwindow = '30s'\n", "tenants.acme: rules[0]"),
    ],
    ids=[
        "unknown top-level key",
        "misspelt rule key",
        "rule without a name",
        "rule name with a space",
        "unknown group_by",
        "unknown verdict",
        "window under a minute",
        "window not whole minutes",
        "window over a day",
        "window not a duration",
        "lookback over the store's reach",
        "threshold above 1",
        "threshold of 0",
        "threshold as text",
        "both conditions off",
        "baseline factor of 1",
        "no baseline windows",
        "min_turns of 0",
        "min_turns fractional",
        "min_rate above 1",
        "cooldown over 7 days",
        "negative cooldown",
        "webhooks not a list",
        "webhook without url",
        "unknown webhook format",
        "webhook not http",
        "unknown webhook key",
        "shared webhook not a URL",
        "dashboard_url not text",
        "rules not tables",
        "duplicate rule names",
        "no delivery attempts",
        "too many delivery attempts",
        "zero backoff",
        "timeout too long",
        "unknown delivery key",
        "delivery not a table",
        "TOML syntax error",
        "tenants not a table",
        "tenant section not a table",
        "unknown tenant key",
        "tenant webhook not a URL",
        "tenant rule with a bad window",
    ],
)
def test_a_bad_file_names_the_key(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_alert_config(write(tmp_path, text))
    assert named in str(caught.value)
    assert "alerts.toml" in str(caught.value)
    assert isinstance(caught.value, FactLedgerError)


def test_a_tenant_section_replaces_the_rules_or_the_receivers_of_that_tenant_only(
    tmp_path: Path,
) -> None:
    config = load_alert_config(
        write(
            tmp_path,
            "webhooks = [{url = 'http://ops/hook'}]\n"
            "[[rules]]\nname = 'shared'\n"
            "[tenants.acme]\nwebhooks = [{url = 'http://acme/hook', format = 'slack'}]\n"
            "[tenants.globex]\n[[tenants.globex.rules]]\nname = 'own'\nmin_turns = 5\n",
        )
    )
    ops = (Webhook("http://ops/hook"),)
    other = config.for_tenant("initech")
    assert [(r.name, r.webhooks) for r in other.rules] == [("shared", ops)]
    acme = config.for_tenant("acme")
    assert [(r.name, r.webhooks) for r in acme.rules] == [
        ("shared", (Webhook("http://acme/hook", "slack"),))
    ]
    globex = config.for_tenant("globex")
    assert [(r.name, r.min_turns, r.webhooks) for r in globex.rules] == [("own", 5, ops)]
    assert globex.for_tenant("acme") is globex, "a tenant's configuration is final"
    config.check_tenants(["acme", "globex", "initech"])
    with pytest.raises(ConfigError, match=r"\['globex'\]"):
        config.check_tenants(["acme", "default"])


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml"):
        load_alert_config(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (90, timedelta(seconds=90)),
        (2.5, timedelta(seconds=2.5)),
        ("15m", timedelta(minutes=15)),
        ("1h30m", timedelta(minutes=90)),
        ("1d", timedelta(days=1)),
        ("500ms", timedelta(milliseconds=500)),
        (" 2h ", timedelta(hours=2)),
        ("0s", timedelta(0)),
    ],
    ids=[
        "int seconds",
        "float seconds",
        "minutes",
        "hours and minutes",
        "day",
        "ms",
        "padded",
        "0",
    ],
)
def test_durations_are_read(value: object, expected: timedelta) -> None:
    assert parse_duration(value) == expected
    assert parse_duration(format_duration(expected)) == expected


@pytest.mark.parametrize(
    "value",
    ["", "15", "15 minutes", "m15", "1.5h", "-5m", -1, True, None, [1]],
    ids=[
        "empty",
        "no unit",
        "word",
        "unit first",
        "fraction",
        "negative text",
        "negative",
        "bool",
        "none",
        "list",
    ],
)
def test_bad_durations_are_refused(value: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(value)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://hooks.slack.com/services/T0/B0/secret", "https://hooks.slack.com/… #"),
        ("http://127.0.0.1:9000/hook?token=s", "http://127.0.0.1:9000/… #"),
        ("http://user:pw@example.com/", "http://example.com #"),
    ],
    ids=["path hidden", "port kept, query hidden", "credentials dropped"],
)
def test_webhook_urls_are_redacted(url: str, shown: str) -> None:
    redacted = redact_url(url)
    assert redacted.startswith(shown)
    assert "secret" not in redacted and "token" not in redacted and "pw" not in redacted
    assert redact_url(url) == redacted
    assert redact_url(url + "x") != redacted
