"""The `[export]` section of the service's settings file (FACTLEDGER_CONFIG).

    [export]
    max_records = 100000            # per target: records pending in the outbox
    max_bytes = 67108864            # per target: bytes pending in the outbox
    give_up_seconds = 86400         # a record pending this long is dropped (gave_up)
    batch_size = 100                # records per delivery
    deliver_timeout_seconds = 10    # one delivery's time limit
    backoff_initial_seconds = 1     # first wait after a failed delivery, doubling...
    backoff_max_seconds = 60        # ...up to this (a Retry-After too)
    dashboard_url = "http://127.0.0.1:8501"   # the turn links records carry

    [export.otel]                   # one table per target (`export.targets` lists them)
    enabled = true
    endpoint = "http://collector:4318/v1/logs"   # any other key goes to the target

A bad value fails at start-up naming its key, never its value: a target's options hold
tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from factledger.collector.export.backoff import Backoff
from factledger.collector.export.lane import LaneLimits
from factledger.collector.export.records import DEFAULT_DASHBOARD_URL
from factledger.collector.export.targets import TARGET_MODULES
from factledger.processors.config_files import read_toml
from factledger.processors.errors import ConfigError


@dataclass(frozen=True)
class TargetSettings:
    """One `[export.<name>]` table: whether it is on, and the rest for its `build`."""

    name: str
    enabled: bool
    options: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ExportSettings:
    limits: LaneLimits = field(default_factory=LaneLimits)
    dashboard_url: str = DEFAULT_DASHBOARD_URL
    targets: tuple[TargetSettings, ...] = ()

    @property
    def enabled_targets(self) -> tuple[TargetSettings, ...]:
        return tuple(t for t in self.targets if t.enabled)

    @classmethod
    def from_toml(cls, path: Path) -> ExportSettings:
        section = read_toml(path, "the settings").get("export", {})
        if not isinstance(section, Mapping):
            raise ConfigError(f"{path}: [export] must be a table")
        try:
            return cls.from_mapping(section)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from exc

    @classmethod
    def from_mapping(cls, section: Mapping[str, Any]) -> ExportSettings:
        targets = []
        for key, value in section.items():
            if isinstance(value, Mapping):
                targets.append(_target(key, value))
            elif key not in _SCALARS:
                raise ConfigError(f"export.{key}: unknown key")
        limits = LaneLimits(
            max_records=_count(section, "max_records", 100_000, 1, 100_000_000),
            max_bytes=_count(section, "max_bytes", 64 * 1024 * 1024, 1024, 1 << 40),
            give_up_seconds=_seconds(section, "give_up_seconds", 24 * 3600.0),
            batch_size=_count(section, "batch_size", 100, 1, 10_000),
            deliver_timeout_seconds=_seconds(section, "deliver_timeout_seconds", 10.0),
            backoff=Backoff(
                initial_seconds=_seconds(section, "backoff_initial_seconds", 1.0),
                max_seconds=_seconds(section, "backoff_max_seconds", 60.0),
            ),
        )
        return cls(limits=limits, dashboard_url=_url(section), targets=tuple(targets))


_SCALARS = {
    "max_records",
    "max_bytes",
    "give_up_seconds",
    "batch_size",
    "deliver_timeout_seconds",
    "backoff_initial_seconds",
    "backoff_max_seconds",
    "dashboard_url",
}


def _target(name: str, table: Mapping[str, Any]) -> TargetSettings:
    if name not in TARGET_MODULES:
        known = ", ".join(sorted(TARGET_MODULES))
        raise ConfigError(f"export.{name}: unknown target (one of {known})")
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"export.{name}.enabled: true or false")
    options = {k: v for k, v in table.items() if k != "enabled"}
    return TargetSettings(name=name, enabled=enabled, options=options)


def _count(section: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = section.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ConfigError(f"export.{key}: a whole number from {low} to {high}")
    return value


def _seconds(section: Mapping[str, Any], key: str, default: float) -> float:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(f"export.{key}: seconds above 0")
    return float(value)


def _url(section: Mapping[str, Any]) -> str:
    value = section.get("dashboard_url", DEFAULT_DASHBOARD_URL)
    if not isinstance(value, str) or urlsplit(value).scheme not in ("http", "https"):
        raise ConfigError("export.dashboard_url: an http(s) URL")
    return value
