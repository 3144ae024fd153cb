"""Alert rules: what to watch, when it counts as a spike, and where to say so.

Read once from a TOML file into frozen objects; a bad file fails at start-up with a
ConfigError naming the file and the key. Without a file (or with a file that lists no
rules) the built-in `DEFAULT_RULE` applies. The format::

    dashboard_url = "http://127.0.0.1:8501"          # optional: linked from notices
    webhooks = [{ url = "https://...", format = "slack" }]  # for rules that name none

    [delivery]                                       # optional
    attempts = 5                                     # per notice and webhook
    backoff = "1s"                                   # first retry delay, doubled each time
    timeout = "5s"                                   # one HTTP attempt

    [[rules]]
    name = "reject-rate-per-model"
    group_by = "model"                               # model | agent | service | kind
    verdict = "reject"                               # reject | flag | any
    window = "15m"
    threshold = 0.3                                  # or false: no absolute threshold
    baseline_factor = 2.0                            # or false: no baseline comparison
    baseline_windows = 4
    min_turns = 20
    min_rate = 0.05
    cooldown = "1h"
    webhooks = [{ url = "http://hooks.local/x", format = "json" }]

    [tenants.acme]                                   # optional, per tenant
    webhooks = [{ url = "https://acme.example/hook" }]   # acme's rules that name none
    [[tenants.acme.rules]]                           # acme's own rules (else the above)
    name = "acme-reject-rate"

Durations are a number of seconds or a string of whole units: "90s", "15m", "1h30m",
"500ms" (delivery settings only: windows are whole minutes).
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal, cast

from factledger.processors.config_files import read_toml
from factledger.processors.config_keys import unknown_keys
from factledger.processors.errors import ConfigError

from .webhook_targets import named_refusal

GroupBy = Literal["model", "agent", "service", "kind"]
Counted = Literal["reject", "flag", "any"]
WebhookFormat = Literal["json", "slack"]

GROUP_BYS: tuple[str, ...] = ("model", "agent", "service", "kind")
COUNTED: tuple[str, ...] = ("reject", "flag", "any")
WEBHOOK_FORMATS: tuple[str, ...] = ("json", "slack")

MAX_RULES = 100
MAX_WEBHOOKS = 20
MAX_LOOKBACK_MINUTES = 10_000
"""The current window plus the baseline windows, in minutes: what one store query covers
(the store's per-minute reject-rate series holds at most 10,000 points)."""
MAX_WINDOW = timedelta(days=1)
MAX_COOLDOWN = timedelta(days=7)
MAX_ATTEMPTS = 20
MAX_BACKOFF = timedelta(hours=1)
MAX_TIMEOUT = timedelta(minutes=2)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}")
_DURATION_PART = re.compile(r"(\d+)(ms|s|m|h|d)")
_UNIT = {
    "ms": timedelta(milliseconds=1),
    "s": timedelta(seconds=1),
    "m": timedelta(minutes=1),
    "h": timedelta(hours=1),
    "d": timedelta(days=1),
}


@dataclass(frozen=True)
class Webhook:
    """One receiver of notices: `json` gets the generic payload, `slack` the
    Slack-compatible one (`{"text", "blocks"}`, also read by Mattermost and others)."""

    url: str
    format: WebhookFormat = "json"

    @property
    def redacted(self) -> str:
        return redact_url(self.url)


@dataclass(frozen=True)
class AlertRule:
    """One rule, evaluated per group (per model, agent, service or finding kind).

    A group fires when its window holds at least `min_turns` turns and its rate (the
    share of turns with a `verdict` outcome; for `kind`, with a finding of that kind at
    that severity) is above `threshold`, or above `baseline_factor` times its own rate
    over the previous `baseline_windows` windows (when those held at least `min_turns`
    turns and the rate is at least `min_rate`). `None` turns a condition off.
    """

    name: str
    group_by: GroupBy = "model"
    verdict: Counted = "reject"
    window: timedelta = timedelta(minutes=15)
    threshold: float | None = 0.3
    baseline_factor: float | None = 2.0
    baseline_windows: int = 4
    min_turns: int = 20
    min_rate: float = 0.05
    cooldown: timedelta = timedelta(hours=1)
    webhooks: tuple[Webhook, ...] = ()

    @property
    def lookback(self) -> timedelta:
        """The current window plus the baseline windows."""
        return self.window * (self.baseline_windows + 1)

    def as_json(self) -> dict[str, Any]:
        """The rule as the API shows it (durations as text and as seconds)."""
        return {
            "name": self.name,
            "group_by": self.group_by,
            "verdict": self.verdict,
            "window": format_duration(self.window),
            "window_seconds": int(self.window.total_seconds()),
            "threshold": self.threshold,
            "baseline_factor": self.baseline_factor,
            "baseline_windows": self.baseline_windows,
            "min_turns": self.min_turns,
            "min_rate": self.min_rate,
            "cooldown": format_duration(self.cooldown),
            "cooldown_seconds": int(self.cooldown.total_seconds()),
            "webhooks": [{"url": w.redacted, "format": w.format} for w in self.webhooks],
        }


@dataclass(frozen=True)
class DeliverySettings:
    """How notices are sent: `attempts` per notice and webhook (the first included),
    `backoff` before the first retry (doubled for each later one), `timeout` per try."""

    attempts: int = 5
    backoff: timedelta = timedelta(seconds=1)
    timeout: timedelta = timedelta(seconds=5)


DEFAULT_RULE = AlertRule(name="reject-rate-per-model")
"""Reject rate per model over 15 minutes above 30 %, or above twice the model's rate over
the previous hour, with at least 20 turns; repeated at most hourly."""


@dataclass(frozen=True)
class AlertConfig:
    """Every rule, the delivery settings, and where they came from (`source` None: the
    built-in default). `tenant_rules` holds the rules of tenants with a `[tenants.<name>]`
    section; every other tenant is evaluated with `rules`."""

    rules: tuple[AlertRule, ...] = (DEFAULT_RULE,)
    delivery: DeliverySettings = field(default_factory=DeliverySettings)
    dashboard_url: str | None = None
    source: Path | None = None
    tenant_rules: Mapping[str, tuple[AlertRule, ...]] = field(default_factory=dict)

    def rule(self, name: str) -> AlertRule | None:
        return next((r for r in self.rules if r.name == name), None)

    def for_tenant(self, tenant: str) -> AlertConfig:
        """The configuration one tenant's alerts are evaluated with: its own rules and
        webhooks where the file has a section for it, the top-level ones otherwise."""
        if not self.tenant_rules:
            return self
        return replace(self, rules=self.tenant_rules.get(tenant, self.rules), tenant_rules={})

    def check_tenants(self, known: Iterable[str]) -> None:
        """Raise ConfigError when a `[tenants.<name>]` section names a tenant the service
        does not have (a typo there would silently leave that tenant on the shared rules)."""
        unknown = sorted(set(self.tenant_rules) - set(known))
        if unknown:
            raise ConfigError(
                f"{self.source or '<alerts>'}: [tenants] names tenants this service does not "
                f"have: {unknown}; its tenants: {sorted(known)} (see FACTLEDGER_INGEST_TOKENS)"
            )


# --- reading ----------------------------------------------------------------------------


def load_alert_config(path: Path | None) -> AlertConfig:
    """The rules of the TOML file at `path`, or the built-in default when `path` is None.

    Raises ConfigError naming the file and the key.
    """
    if path is None:
        return AlertConfig()
    data = read_toml(path, "alert rules")
    return alert_config_from_mapping(data, source=path)


_TOP_KEYS = {"dashboard_url", "webhooks", "delivery", "rules", "tenants"}
_TENANT_KEYS = {"webhooks", "rules"}
_RULE_KEYS = {
    "name",
    "group_by",
    "verdict",
    "window",
    "threshold",
    "baseline_factor",
    "baseline_windows",
    "min_turns",
    "min_rate",
    "cooldown",
    "webhooks",
}


def alert_config_from_mapping(data: Mapping[str, Any], *, source: Path | None) -> AlertConfig:
    """The rules of an already parsed TOML document. Raises ConfigError."""
    where = str(source or "<alerts>")
    _no_unknown(data, _TOP_KEYS, where)
    dashboard_url = data.get("dashboard_url")
    if dashboard_url is not None:
        dashboard_url = _url(dashboard_url, f"{where}: dashboard_url")
    shared = _webhooks(data.get("webhooks", []), f"{where}: webhooks")
    delivery = _delivery(data.get("delivery", {}), f"{where}: [delivery]")
    raw_rules = data.get("rules", [])
    rules = _rules(raw_rules, where, shared)
    tenant_rules = _tenant_rules(data.get("tenants", {}), raw_rules, shared, where)
    return AlertConfig(
        rules=rules,
        delivery=delivery,
        dashboard_url=dashboard_url,
        source=source,
        tenant_rules=tenant_rules,
    )


def _rules(raw_rules: Any, where: str, shared: tuple[Webhook, ...]) -> tuple[AlertRule, ...]:
    if not isinstance(raw_rules, list) or not all(isinstance(r, Mapping) for r in raw_rules):
        raise ConfigError(f"{where}: rules must be an array of tables ([[rules]])")
    if len(raw_rules) > MAX_RULES:
        raise ConfigError(f"{where}: rules: at most {MAX_RULES} rules, not {len(raw_rules)}")
    if raw_rules:
        rules = tuple(_rule(raw, f"{where}: rules[{i}]", shared) for i, raw in enumerate(raw_rules))
    else:
        rules = (AlertRule(name=DEFAULT_RULE.name, webhooks=shared),)
    names = [r.name for r in rules]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"{where}: rules: names must be unique, repeated: {duplicates}")
    return rules


def _tenant_rules(
    raw: Any, top_rules: Any, top_webhooks: tuple[Webhook, ...], where: str
) -> dict[str, tuple[AlertRule, ...]]:
    """`[tenants.<name>]` sections: a tenant's `rules` replace the top-level ones for it,
    and its `webhooks` (else the top-level ones) receive the notices of its rules that
    name none."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: tenants must be a table of [tenants.<name>] sections")
    result: dict[str, tuple[AlertRule, ...]] = {}
    for tenant, section in raw.items():
        at = f"{where}: tenants.{tenant}"
        if not isinstance(section, Mapping):
            raise ConfigError(f"{at} must be a table with webhooks and/or [[rules]]")
        _no_unknown(section, _TENANT_KEYS, at)
        shared = (
            _webhooks(section["webhooks"], f"{at}.webhooks")
            if "webhooks" in section
            else top_webhooks
        )
        result[str(tenant)] = _rules(section.get("rules", top_rules), at, shared)
    return result


def _rule(raw: Mapping[str, Any], where: str, shared: tuple[Webhook, ...]) -> AlertRule:
    _no_unknown(raw, _RULE_KEYS, where)
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(
            f"{where}.name is required: letters, digits and _ . : - (at most 100), not {name!r}"
        )
    where = f"{where} ({name})"
    d = DEFAULT_RULE
    window = _duration(raw.get("window", d.window), f"{where}.window")
    if window % timedelta(minutes=1) or not timedelta(minutes=1) <= window <= MAX_WINDOW:
        raise ConfigError(
            f"{where}.window must be whole minutes between 1m and 1d, not {raw.get('window')!r}"
        )
    baseline_windows = _int(raw, "baseline_windows", d.baseline_windows, 1, 100, where)
    minutes = int(window.total_seconds()) // 60 * (baseline_windows + 1)
    if minutes > MAX_LOOKBACK_MINUTES:
        raise ConfigError(
            f"{where}: window x (baseline_windows + 1) is {minutes} minutes, more than "
            f"{MAX_LOOKBACK_MINUTES}: shorten the window or use fewer baseline_windows"
        )
    threshold = _optional_float(raw, "threshold", d.threshold, 0.0, 1.0, where)
    factor = _optional_float(raw, "baseline_factor", d.baseline_factor, 1.0, 1000.0, where)
    if threshold is None and factor is None:
        raise ConfigError(f"{where}: threshold and baseline_factor cannot both be false")
    cooldown = _duration(raw.get("cooldown", d.cooldown), f"{where}.cooldown")
    if cooldown > MAX_COOLDOWN:
        raise ConfigError(f"{where}.cooldown must be at most 7d, not {raw.get('cooldown')!r}")
    webhooks = _webhooks(raw["webhooks"], f"{where}.webhooks") if "webhooks" in raw else shared
    min_rate = _optional_float(raw, "min_rate", d.min_rate, 0.0, 1.0, where, inclusive=True)
    return AlertRule(
        name=name,
        group_by=cast(GroupBy, _choice(raw, "group_by", d.group_by, GROUP_BYS, where)),
        verdict=cast(Counted, _choice(raw, "verdict", d.verdict, COUNTED, where)),
        window=window,
        threshold=threshold,
        baseline_factor=factor,
        baseline_windows=baseline_windows,
        min_turns=_int(raw, "min_turns", d.min_turns, 1, 1_000_000, where),
        min_rate=0.0 if min_rate is None else min_rate,
        cooldown=cooldown,
        webhooks=webhooks,
    )


def _delivery(raw: Any, where: str) -> DeliverySettings:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a table")
    _no_unknown(raw, {"attempts", "backoff", "timeout"}, where)
    d = DeliverySettings()
    backoff = _duration(raw.get("backoff", d.backoff), f"{where}.backoff")
    timeout = _duration(raw.get("timeout", d.timeout), f"{where}.timeout")
    if not timedelta(0) < backoff <= MAX_BACKOFF:
        raise ConfigError(f"{where}.backoff must be more than 0 and at most 1h")
    if not timedelta(0) < timeout <= MAX_TIMEOUT:
        raise ConfigError(f"{where}.timeout must be more than 0 and at most 2m")
    return DeliverySettings(
        attempts=_int(raw, "attempts", d.attempts, 1, MAX_ATTEMPTS, where),
        backoff=backoff,
        timeout=timeout,
    )


def _webhooks(raw: Any, where: str) -> tuple[Webhook, ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"{where} must be an array of {{url, format}} tables")
    if len(raw) > MAX_WEBHOOKS:
        raise ConfigError(f"{where}: at most {MAX_WEBHOOKS} webhooks, not {len(raw)}")
    hooks = []
    for i, item in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(item, Mapping):
            raise ConfigError(f"{at} must be a table {{url = ..., format = ...}}")
        _no_unknown(item, {"url", "format"}, at)
        if "url" not in item:
            raise ConfigError(f"{at}.url is required")
        fmt = _choice(item, "format", "json", WEBHOOK_FORMATS, at)
        hooks.append(Webhook(url=_url(item["url"], f"{at}.url"), format=cast(WebhookFormat, fmt)))
    return tuple(hooks)


# --- values -----------------------------------------------------------------------------


def parse_duration(value: Any) -> timedelta:
    """A duration from seconds (int or float) or text of whole units ("1h30m", "500ms").

    Raises ValueError for anything else, or a negative duration."""
    if isinstance(value, timedelta):
        result = value
    elif isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    elif isinstance(value, int | float):
        result = timedelta(seconds=value)
    elif isinstance(value, str) and value.strip():
        text = value.strip().replace(" ", "")
        parts = _DURATION_PART.findall(text)
        if "".join(n + u for n, u in parts) != text:
            raise ValueError(f"not a duration like '15m' or '1h30m': {value!r}")
        result = sum((int(n) * _UNIT[u] for n, u in parts), timedelta())
    else:
        raise ValueError(f"not a duration: {value!r}")
    if result < timedelta(0):
        raise ValueError(f"a duration cannot be negative: {value!r}")
    return result


def format_duration(value: timedelta) -> str:
    """The shortest text `parse_duration` reads back as `value` ("15m", "1h30m", "0s")."""
    ms = value // timedelta(milliseconds=1)
    if ms == 0:
        return "0s"
    parts = []
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        count, ms = divmod(ms, size)
        if count:
            parts.append(f"{count}{unit}")
    if ms:
        parts.append(f"{ms}ms")
    return "".join(parts)


def redact_url(url: str) -> str:
    """The URL as it may be shown and stored: scheme and host, the path hidden (a webhook
    path is often its secret, as Slack's are), and a short digest telling URLs apart.
    "https://hooks.slack.com/services/T0/B0/xyz" -> "https://hooks.slack.com/… #1a2b3c4d"."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    digest = hashlib.sha256(url.encode()).hexdigest()[:8]
    hidden = "/…" if parts.path.strip("/") or parts.query else ""
    return f"{parts.scheme}://{host}{hidden} #{digest}"


def _duration(value: Any, where: str) -> timedelta:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _no_unknown(raw: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"{where} has {unknown_keys(unknown)}; known: {sorted(known)}")


def _choice(
    raw: Mapping[str, Any], key: str, default: str, choices: Sequence[str], where: str
) -> str:
    value = raw.get(key, default)
    if value not in choices:
        raise ConfigError(f"{where}.{key} must be one of {list(choices)}, not {value!r}")
    return str(value)


def _int(raw: Mapping[str, Any], key: str, default: int, low: int, high: int, where: str) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{where}.{key} must be a whole number {low}..{high}, not {value!r}")
    return value


def _optional_float(
    raw: Mapping[str, Any],
    key: str,
    default: float | None,
    low: float,
    high: float,
    where: str,
    *,
    inclusive: bool = False,
) -> float | None:
    """A number in (low, high] (or [low, high] when `inclusive`), or false for None."""
    value = raw.get(key, default)
    if value is False or value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok:
        ok = (low <= value if inclusive else low < value) and value <= high
    if not ok:
        bracket = "[" if inclusive else "("
        raise ConfigError(
            f"{where}.{key} must be a number in {bracket}{low:g}, {high:g}] or false, not {value!r}"
        )
    return float(value)


def _url(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise ConfigError(f"{where} must be an http:// or https:// URL, not {value!r}")
    if len(value) > 2000 or any(c.isspace() for c in value):
        raise ConfigError(f"{where} must be a URL without spaces, at most 2000 characters")
    refused = named_refusal(value)
    if refused is not None:
        raise ConfigError(f"{where} is refused: {refused} (no notice goes to a metadata service)")
    return value
