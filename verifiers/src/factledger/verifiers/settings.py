"""The `[verification]` section of the settings file: which sources of truth to ask, and
how much asking may take. Read once at start-up; a bad value raises `ConfigError`
naming the key (`verification.git.repositories`, ...).

    [verification]
    enabled = true              # false: no verification at all
    trace = true                # the turn's own listings, reads and searches
    threads = 2                 # turns verified at once (the service)
    max_queue = 1000            # turns waiting; more are left with their first verdict
    budget_seconds = 30         # per turn, every source together
    per_source_seconds = 10     # per question to one source
    retry_seconds = [5, 30, 120]  # waits before asking an unreachable source again

    [verification.git]          # factledger.verifiers.git_settings
    [verification.links]        # factledger.verifiers.links
    [verification.workspace]    # factledger.verifiers.workspace
    [[verification.plugins]]    # factledger.verifiers.plugins

The sources are asked in this order: the trace, the workspace (uncommitted files are
there first), git, plugins, links; the first that settles a name answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from factledger.processors.config_files import read_toml
from factledger.processors.errors import ConfigError
from factledger.processors.verification.base import Verifier
from factledger.processors.verification.trace_source import TraceVerifier

from . import git_settings
from .git import GitVerifier
from .git_settings import GitSettings

_KEYS = frozenset(
    {
        "enabled",
        "trace",
        "threads",
        "max_queue",
        "budget_seconds",
        "per_source_seconds",
        "retry_seconds",
        "git",
    }
)
T = TypeVar("T")


@dataclass(frozen=True)
class VerificationSettings:
    """What `[verification]` says; the defaults verify from the trace alone."""

    enabled: bool = True
    trace: bool = True
    threads: int = 2
    max_queue: int = 1_000
    budget_seconds: float = 30.0
    per_source_seconds: float = 10.0
    retry_seconds: tuple[float, ...] = (5.0, 30.0, 120.0)
    git: GitSettings | None = None
    sources: tuple[str, ...] = field(default=())
    """Names of the configured sources, in the order they are asked (for logs)."""

    @classmethod
    def from_toml(cls, path: Path) -> VerificationSettings:
        data = read_toml(path, "the settings")
        section = data.get("verification", {})
        if not isinstance(section, Mapping):
            raise ConfigError(f"{path}: [verification] must be a table")
        try:
            return cls.from_mapping(section)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from exc

    @classmethod
    def from_mapping(cls, section: Mapping[str, Any]) -> VerificationSettings:
        unknown = sorted(set(section) - _KEYS)
        if unknown:
            raise ConfigError(f"verification.{unknown[0]}: unknown key")
        git = _source(section, "git", git_settings.from_mapping)
        retry = section.get("retry_seconds", [5.0, 30.0, 120.0])
        if not isinstance(retry, list) or not all(_non_negative(v) for v in retry):
            raise ConfigError("verification.retry_seconds: a list of seconds (>= 0)")
        settings = cls(
            enabled=_flag(section, "enabled", True),
            trace=_flag(section, "trace", True),
            threads=_count(section, "threads", 2, 1, 64),
            max_queue=_count(section, "max_queue", 1_000, 1, 1_000_000),
            budget_seconds=_seconds(section, "budget_seconds", 30.0),
            per_source_seconds=_seconds(section, "per_source_seconds", 10.0),
            retry_seconds=tuple(float(v) for v in retry),
            git=git,
        )
        names = [name for name, on in (("trace", settings.trace), ("git", git)) if on]
        return replace(settings, sources=tuple(names))

    def verifiers(self) -> list[Verifier]:
        """The configured sources, in the order they are asked; none when disabled."""
        if not self.enabled:
            return []
        out: list[Verifier] = []
        if self.trace:
            out.append(TraceVerifier())
        if self.git is not None:
            out.append(GitVerifier(self.git))
        return out


def _source(
    section: Mapping[str, Any], key: str, build: Callable[[Mapping[str, Any]], T]
) -> T | None:
    value = section.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(f"verification.{key}: must be a table")
    try:
        return build(value)
    except ValueError as exc:
        message = str(exc)
        where = f"verification.{key}"
        raise ConfigError(message if message.startswith(where) else f"{where}: {message}") from exc


def _flag(section: Mapping[str, Any], key: str, default: bool) -> bool:
    value = section.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"verification.{key}: true or false, not {value!r}")
    return value


def _non_negative(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _seconds(section: Mapping[str, Any], key: str, default: float) -> float:
    value = section.get(key, default)
    if not _non_negative(value) or value == 0:
        raise ConfigError(f"verification.{key}: seconds above 0, not {value!r}")
    return float(value)


def _count(section: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = section.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ConfigError(f"verification.{key}: a whole number from {low} to {high}, not {value!r}")
    return value
