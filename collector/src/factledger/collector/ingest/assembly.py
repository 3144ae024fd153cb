"""What waits for turn assembly: spans just stored, and spans read back from the store.

The span writer and recovery put; the turn processor (`collector.judge`) takes, alone.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass
from typing import TypeAlias

from factledger.processors.assembly.assembler import PriorVerdict
from factledger.processors.spans import SpanRecord

ASSEMBLY_CHUNK = 500
"""Spans added between two looks for due turns, so a big batch never delays a verdict."""

ASSEMBLY_QUEUE_ITEMS = 10_000


@dataclass(frozen=True)
class ReadBack:
    """Spans read back from the store, and the stored verdicts they go on from (handed on
    before them)."""

    priors: tuple[PriorVerdict, ...]
    spans: tuple[SpanRecord, ...]
    workers: frozenset[int] | None = None
    """The judge workers it is read back for (those restarted); a trace routed to another
    worker is left to it. None: every worker (a restart of the service, late spans)."""


AssemblyItem: TypeAlias = tuple[SpanRecord, ...] | ReadBack
AssemblyQueue: TypeAlias = queue.Queue[AssemblyItem]


def assembly_queue() -> AssemblyQueue:
    """The bounded queue between the stages that store or read back and the judging."""
    return queue.Queue(maxsize=ASSEMBLY_QUEUE_ITEMS)
