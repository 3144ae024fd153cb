"""What the in-loop guard did in a turn, read from the turn's spans, and what it came to.

The guard adapters (`factledger.guards.telemetry`) record each decision on the span that
is current when they decide: `factledger.guard.checks` (attempts checked on that span),
`factledger.guard.nudges` (nudges sent on it), and `factledger.guard.outcome` /
`factledger.guard.action` of the span's latest decision, with one
`gen_ai.evaluation.result` event per attempt. A framework may spread one turn's
decisions over several spans (one per step): the counts add up, and the outcome and
action are those of the span whose latest decision came last.

`guard_outcome` is the one definition of what a guarded turn came to; the store, the
API and the dashboard read the value it gives, never the rule again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .spans import SpanRecord

GuardOutcome = Literal["unguarded", "passed", "footnoted", "corrected", "refused"]
GUARD_OUTCOMES: tuple[GuardOutcome, ...] = (
    "unguarded",
    "passed",
    "footnoted",
    "corrected",
    "refused",
)

CHECKS = "factledger.guard.checks"
NUDGES = "factledger.guard.nudges"
OUTCOME = "factledger.guard.outcome"
ACTION = "factledger.guard.action"
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "factledger.guard"
_MAX_COUNT = 1_000_000
"""A count above this is no guard's (a bad span): it is read as that bound."""


@dataclass(frozen=True)
class GuardActivity:
    """The guard's decisions in one turn: `checks` attempts checked, `nudges` nudges sent,
    and the `outcome` (pass, flag, reject) and `action` (pass, nudge, annotate, raise) of
    the last decision. All empty (`UNGUARDED`) when no span of the turn carries any."""

    checks: int = 0
    nudges: int = 0
    outcome: str = ""
    action: str = ""

    @property
    def result(self) -> GuardOutcome:
        """What the guarded turn came to (`guard_outcome`)."""
        return guard_outcome(self)


UNGUARDED = GuardActivity()


def guard_outcome(activity: GuardActivity) -> GuardOutcome:
    """What a turn came to under the guard, from its counts and its last decision:

    - `unguarded`: no attempt was checked;
    - `refused`: the last decision raised (the guard stopped the run), or the turn was
      nudged and its last attempt is still rejected (the escalated footnote);
    - `corrected`: nudged, and the last attempt passed or was only flagged: the model
      corrected itself;
    - `footnoted`: never nudged, and the reply was annotated (a flag, an identifier
      quoted from the user, or a reject where no nudge was allowed);
    - `passed`: checked, never nudged, and handed on as it was.

    A decision the adapters do not write (an unknown action) counts as `passed` when it
    handed the reply on clean, else `footnoted`; a guard never reads as unguarded once it
    checked."""
    if activity.checks <= 0:
        return "unguarded"
    if activity.action == "raise":
        return "refused"
    if activity.nudges > 0:
        return "refused" if activity.outcome == "reject" else "corrected"
    if activity.action == "pass" and activity.outcome in ("pass", ""):
        return "passed"
    return "footnoted"


def guard_activity(spans: Iterable[SpanRecord]) -> GuardActivity:
    """The guard's activity over a turn's spans (any order): counts summed, the outcome
    and action of the span whose latest decision is the latest (its last guard
    evaluation event, else its end). `UNGUARDED` when no span has a check."""
    checks = nudges = 0
    last: tuple[int, str, str] | None = None
    for span in spans:
        attributes = span.attributes
        span_checks = _count(attributes.get(CHECKS))
        if span_checks <= 0:
            continue
        checks += span_checks
        nudges += _count(attributes.get(NUDGES))
        at = _decided_at(span)
        if last is None or at >= last[0]:
            last = (at, _text(attributes.get(OUTCOME)), _text(attributes.get(ACTION)))
    if last is None:
        return UNGUARDED
    return GuardActivity(min(checks, _MAX_COUNT), min(nudges, _MAX_COUNT), last[1], last[2])


def _decided_at(span: SpanRecord) -> int:
    times = [
        event.time_unix_nano
        for event in span.events
        if event.name == EVALUATION_EVENT
        and event.attributes.get("gen_ai.evaluation.name") == EVALUATION_NAME
    ]
    return max(times, default=span.end_time_unix_nano or span.start_time_unix_nano)


def _count(value: Any) -> int:
    # An int as the SDK writes it; a string from a store that kept only text.
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(0, min(value, _MAX_COUNT))
    if isinstance(value, str) and value.isdigit():
        return min(int(value), _MAX_COUNT)
    return 0


def _text(value: Any) -> str:
    return value[:32] if isinstance(value, str) else ""
