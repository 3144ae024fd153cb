"""Plugins for tests/unit/test_plugin_verifier.py, loaded by their import path."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from factledger.processors.model import Turn
from factledger.processors.verification.base import Subject, SubjectKind
from factledger.verifiers.plugins import PluginAnswer

KNOWN_ORDERS = frozenset({"ORD-1", "ORD-2"})


def order_exists(subject: Subject, turn: Turn, timeout: float) -> PluginAnswer | None:
    if subject.kind is not SubjectKind.RECORD or not subject.name.startswith("ORD-"):
        return None
    found = subject.name in KNOWN_ORDERS
    return PluginAnswer(exists=found, query=f"orders {subject.name}", answer=str(found))


def breaks(subject: Subject, turn: Turn, timeout: float) -> PluginAnswer | None:
    raise RuntimeError("token=abc123 rejected")


def sleeps(subject: Subject, turn: Turn, timeout: float) -> PluginAnswer | None:
    time.sleep(timeout + 2.0)
    return PluginAnswer(exists=True)


def returns_text(subject: Subject, turn: Turn, timeout: float) -> Any:
    return "yes"


class Ledger:
    """A class plugin: built once from its options."""

    name = "ledger"

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.entries = frozenset(options["entries"])

    def __call__(self, subject: Subject, turn: Turn, timeout: float) -> PluginAnswer:
        return PluginAnswer(exists=subject.name in self.entries, query=f"ledger {subject.name}")


NOT_CALLABLE = 42
