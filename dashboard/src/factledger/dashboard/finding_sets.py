"""Findings as a reader counts them: a class-5 set is one finding.

The confabulation validator reports a set of invented names as one finding per name (each
with its own token and offsets, so each can be marked, verified and reviewed), and each
of them carries the whole set's real names (`real`). The page shows the set once: the
invented names listed together, the real ones (in a tool result, with the call) beside
them. A validator reports at most one set per turn, so a set is the class-5 findings of
one validator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factledger.dashboard.evidence import source_label

SET_KIND = "confabulated_identifier_set"


@dataclass(frozen=True)
class RealName:
    """A name of a set that a tool result shows, and where."""

    token: str
    source: str


@dataclass(frozen=True)
class FindingGroup:
    """The findings shown as one: their indices in the turn's findings, in order."""

    indices: tuple[int, ...]
    invented: tuple[str, ...] = ()
    """For a set: its names no tool result shows, in reply order."""
    real: tuple[RealName, ...] = ()
    """For a set: its names a tool result shows."""

    @property
    def first(self) -> int:
        return self.indices[0]

    @property
    def is_set(self) -> bool:
        return bool(self.invented)


def finding_groups(findings: Sequence[Mapping[str, Any]]) -> list[FindingGroup]:
    """Every finding alone, except a set's, which come as one group at its first's place."""
    sets: dict[str, list[int]] = {}
    order: list[str | int] = []
    for index, finding in enumerate(findings):
        if finding.get("kind") != SET_KIND:
            order.append(index)
            continue
        validator = str(finding.get("validator", ""))
        if validator not in sets:
            sets[validator] = []
            order.append(validator)
        sets[validator].append(index)
    out: list[FindingGroup] = []
    for entry in order:
        if isinstance(entry, int):
            out.append(FindingGroup((entry,)))
        else:
            out.append(_set_group([(i, findings[i]) for i in sets[entry]]))
    return out


def _set_group(members: Sequence[tuple[int, Mapping[str, Any]]]) -> FindingGroup:
    ordered = sorted(members, key=lambda m: (_start(m[1]), m[0]))
    invented = tuple(dict.fromkeys(str(f.get("token") or "") for _, f in ordered if f.get("token")))
    real = tuple(
        dict.fromkeys(
            RealName(str(r["token"]), source_label(str(r.get("tool", "")), r.get("call_id")))
            for _, f in members
            for r in f.get("real") or ()
            if r.get("token") and r["token"] not in invented
        )
    )
    return FindingGroup(tuple(i for i, _ in members), invented, real)


def _start(finding: Mapping[str, Any]) -> int:
    span = finding.get("span")
    return int(span[0]) if span else 1 << 30
