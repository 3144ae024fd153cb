"""Typed reads of a verifier's settings mapping (a `[verification.*]` table of the file).

Each read returns the value of one key, or its default when the key is absent, and raises
ValueError naming the key when the value has the wrong type or range: a bad setting fails
at start-up, never at the first check. `reject_unknown` names a key no reader knows (a
typo would otherwise be ignored silently).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def reject_unknown(data: Mapping[str, Any], known: Iterable[str], section: str) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValueError(f"{section}: unknown setting {unknown[0]!r}")


def read_bool(data: Mapping[str, Any], key: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{key}: expected true or false, got {value!r}")
    return value


def read_number(
    data: Mapping[str, Any], key: str, default: float, *, minimum: float = 0.0
) -> float:
    value = data.get(key, default)
    # bool is an int subclass: `true` is no number of seconds.
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise ValueError(f"{key}: expected a number >= {minimum:g}, got {value!r}")
    return float(value)


def read_int(data: Mapping[str, Any], key: str, default: int, *, minimum: int = 0) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{key}: expected an integer >= {minimum}, got {value!r}")
    return value


def read_str(data: Mapping[str, Any], key: str, default: str) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{key}: expected a string, got {value!r}")
    return value


def read_str_list(
    data: Mapping[str, Any], key: str, default: tuple[str, ...] = ()
) -> tuple[str, ...]:
    value = data.get(key, default)
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ValueError(f"{key}: expected a list of strings, got {value!r}")
    if not all(isinstance(item, str) for item in value):
        raise ValueError(f"{key}: expected a list of strings, got {value!r}")
    return tuple(value)


def read_str_map(data: Mapping[str, Any], key: str) -> dict[str, str]:
    value = data.get(key, {})
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        # The value is left out of the message: it may hold a credential.
        raise ValueError(f"{key}: expected a table of strings")
    return dict(value)
