"""Claim rules: completion claims per capability, and the tools that back them.

The default rules ship as `claim_rules.toml` beside this module; a deployment replaces them
with its own file. Rules are data; `ClaimMatcher` compiles them once into a few
alternations so a reply is scanned once per language, not once per rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .config_files import read_toml
from .config_keys import unknown_keys
from .errors import ConfigError

DEFAULT_RULES_PATH = Path(__file__).with_name("claim_rules.toml")
_READ_ONLY = re.compile(
    r"(?:get|list|read|fetch|search|find|describe|show|lookup|look_up|query|check|view|"
    r"inspect|count|status|preview|dry_run|diff)(?:_|-|$|[A-Z])",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ClaimRule:
    capability: str
    en: tuple[str, ...] = ()
    de: tuple[str, ...] = ()
    zh: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    any_tool: bool = False
    _answers: dict[tuple[str, bool], bool] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    """`backed_by`'s answers so far: every claim of every turn asks it about every call,
    and tool names repeat across turns. Bounded by `_MAX_REMEMBERED_TOOLS`."""

    def backed_by(self, tool_name: str, *, reading_counts: bool = False) -> bool:
        """True when a successful call of `tool_name` can back this claim.

        A tool named for reading (`get_deploy_status`, `list_commits`) does not back the
        agent's claim of an act ("I deployed"); it does back a report of state ("the order
        was paid") when `reading_counts`, since the reply may just relay what it read.
        """
        if self.any_tool:
            return True
        key = (tool_name, reading_counts)
        answer = self._answers.get(key)
        if answer is None:
            lowered = tool_name.lower()
            answer = (reading_counts or not reads_only(lowered)) and any(
                keyword in lowered for keyword in self.tools
            )
            if len(self._answers) >= _MAX_REMEMBERED_TOOLS:
                self._answers.clear()  # names a client made up without end: start over
            self._answers[key] = answer
        return answer


_MAX_REMEMBERED_TOOLS = 4096


def reads_only(tool_name: str) -> bool:
    """A tool named for reading (`get_deploy_status`, `list_commits`, `gh.search_code`):
    what it returns describes what it read, and it acts on nothing."""
    return _READ_ONLY.match(tool_name.lower().rsplit(".", 1)[-1]) is not None


@dataclass(frozen=True)
class ClaimRules:
    rules: tuple[ClaimRule, ...]

    def by_capability(self, capability: str) -> ClaimRule:
        for rule in self.rules:
            if rule.capability == capability:
                return rule
        raise KeyError(capability)


def load_claim_rules(path: Path | None = None) -> ClaimRules:
    """Read claim rules from TOML (`[[rule]]` tables); the shipped defaults when `path` is None."""
    return _load(path or DEFAULT_RULES_PATH)


@lru_cache(maxsize=8)
def _load(path: Path) -> ClaimRules:
    data = read_toml(path, "claim rules")
    raw_rules = data.get("rule")
    if not isinstance(raw_rules, list) or not raw_rules:
        raise ConfigError(f"claim rules {path}: no [[rule]] tables")
    rules = tuple(_rule(r, f"{path}: rule[{i}]") for i, r in enumerate(raw_rules))
    return ClaimRules(rules)


def _rule(raw: Any, where: str) -> ClaimRule:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} is not a table")
    known = {"capability", "en", "de", "zh", "patterns", "tools", "any_tool"}
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"{where} has {unknown_keys(unknown)}")
    capability = raw.get("capability")
    if not isinstance(capability, str) or not capability:
        raise ConfigError(f"{where} needs a 'capability' name")
    fields = {key: _strings(raw, key, where) for key in ("en", "de", "zh", "patterns", "tools")}
    for pattern in fields["patterns"]:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"{where}: pattern {pattern!r} is invalid: {exc}") from exc
    any_tool = raw.get("any_tool", False)
    if not isinstance(any_tool, bool):
        raise ConfigError(f"{where}.any_tool must be true or false")
    if not fields["tools"] and not any_tool:
        raise ConfigError(f"{where} ({capability}) names no tools and is not any_tool")
    return ClaimRule(
        capability=capability,
        en=tuple(w.lower() for w in fields["en"]),
        de=tuple(w.lower() for w in fields["de"]),
        zh=fields["zh"],
        patterns=fields["patterns"],
        tools=tuple(t.lower() for t in fields["tools"]),
        any_tool=any_tool,
    )


def _strings(raw: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}.{key} must be a list of non-empty strings")
    return tuple(value)


def alternation(words: Sequence[str]) -> str:
    """A regex alternation of literal words, longest first so prefixes never shadow."""
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
