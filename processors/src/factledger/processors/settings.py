"""Validation settings: which validators run, how each kind is graded, which claim rules apply.

Read once into a frozen object. A TOML file may hold:

    [validation]
    disabled_validators = ["confabulation"]
    disabled_kinds = ["stall"]
    claim_rules = "my_rules.toml"        # relative to this file

    [validation.severity]
    ungrounded_tool_argument = "info"
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config_files import read_toml
from .config_keys import unknown_keys
from .errors import ConfigError
from .kinds import Kind, Severity


@dataclass(frozen=True)
class ValidationSettings:
    disabled_validators: frozenset[str] = frozenset()
    disabled_kinds: frozenset[Kind] = frozenset()
    severity: Mapping[Kind, Severity] = field(default_factory=dict)
    claim_rules_path: Path | None = None

    @classmethod
    def from_toml(cls, path: Path) -> ValidationSettings:
        data = read_toml(path, "the validation settings")
        section = data.get("validation", {})
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: [validation] must be a table")
        return cls.from_mapping(section, source=path)

    @classmethod
    def from_mapping(
        cls, section: Mapping[str, Any], *, source: Path | None = None
    ) -> ValidationSettings:
        where = f"{source or '<settings>'}: [validation]"
        if not isinstance(section, Mapping):
            raise ConfigError(f"{where} must be a table")
        known = {"disabled_validators", "disabled_kinds", "severity", "claim_rules"}
        unknown = set(section) - known
        if unknown:
            raise ConfigError(f"{where} has {unknown_keys(unknown)}")
        kinds = frozenset(_kind(k, where) for k in _str_list(section, "disabled_kinds", where))
        raw_severity = section.get("severity", {})
        if not isinstance(raw_severity, Mapping):
            raise ConfigError(f"{where}.severity must be a table of kind = severity")
        severity = {
            _kind(k, where): _severity(v, f"{where}.severity.{k}") for k, v in raw_severity.items()
        }
        rules = section.get("claim_rules")
        rules_path = None
        if rules is not None:
            if not isinstance(rules, str):
                raise ConfigError(f"{where}.claim_rules must be a path string")
            rules_path = Path(rules)
            if source is not None and not rules_path.is_absolute():
                rules_path = source.parent / rules_path
        return cls(
            disabled_validators=frozenset(_str_list(section, "disabled_validators", where)),
            disabled_kinds=kinds,
            severity=severity,
            claim_rules_path=rules_path,
        )


def _str_list(section: Mapping[str, Any], key: str, where: str) -> list[str]:
    value = section.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}.{key} must be a list of strings")
    return value


def _kind(value: str, where: str) -> Kind:
    try:
        return Kind(value)
    except ValueError:
        raise ConfigError(f"{where}: unknown finding kind {value!r}") from None


def _severity(value: Any, where: str) -> Severity:
    try:
        return Severity(value)
    except ValueError:
        raise ConfigError(
            f"{where}: severity must be reject, flag or info, not {value!r}"
        ) from None
