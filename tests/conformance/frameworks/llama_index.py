"""LlamaIndex: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = ()
