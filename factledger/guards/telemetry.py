"""Each guard decision, recorded on the span that is current when the adapter decides.

Attributes (the latest decision of the span wins; the counts add up across attempts):
- `factledger.guard.outcome`: the check's verdict on the last attempt (pass, flag, reject);
- `factledger.guard.action`: what the guard did with it (pass, nudge, annotate, raise);
- `factledger.guard.kinds`: the finding kinds of the last attempt (a string array);
- `factledger.guard.checks`: attempts checked on this span;
- `factledger.guard.nudges`: nudges sent on this span.

And one `gen_ai.evaluation.result` event per attempt, in the OpenTelemetry GenAI
semantic conventions' shape: `gen_ai.evaluation.name` = `factledger.guard`,
`gen_ai.evaluation.score.label` = the outcome, `gen_ai.evaluation.explanation` = the
kinds, plus `factledger.guard.action`.

Where no span is recording when the adapter decides (a framework that runs its hooks
outside its spans' context, or one without instrumentation), the decision gets a span of
its own, `factledger.guard`, a child of whatever context is current. Without an SDK that
span does not record either: the API's non-recording span takes the calls and does
nothing, so recording never costs an agent without OpenTelemetry more than a check.
"""

from __future__ import annotations

from opentelemetry import trace

from factledger.guards.policy import Decision

# The names the service reads back when it rebuilds the turn: defined once, there.
from factledger.processors.guard_activity import (
    ACTION,
    CHECKS,
    EVALUATION_EVENT,
    EVALUATION_NAME,
    NUDGES,
    OUTCOME,
)

OWN_SPAN = "factledger.guard"

_tracer = trace.get_tracer("factledger.guards")


def record(
    decision: Decision, span: trace.Span | None = None, tracer: trace.Tracer | None = None
) -> None:
    """Record `decision` on `span` (default: the current span, else a span of its own,
    made by `tracer`: default, the global provider's)."""
    span = span or trace.get_current_span()
    if span.is_recording():
        _write(span, decision)
        return
    with (tracer or _tracer).start_as_current_span(OWN_SPAN) as own:
        _write(own, decision)


def _write(span: trace.Span, decision: Decision) -> None:
    kinds = list(decision.result.verdict.kinds)
    checks, nudges = _counts(span)
    span.set_attribute(OUTCOME, decision.outcome)
    span.set_attribute(ACTION, decision.action)
    span.set_attribute("factledger.guard.kinds", kinds)
    span.set_attribute(CHECKS, checks + 1)
    span.set_attribute(NUDGES, nudges + (decision.action == "nudge"))
    span.add_event(
        EVALUATION_EVENT,
        {
            "gen_ai.evaluation.name": EVALUATION_NAME,
            "gen_ai.evaluation.score.label": decision.outcome,
            "gen_ai.evaluation.explanation": ", ".join(kinds) or "clean",
            ACTION: decision.action,
        },
    )


def _counts(span: trace.Span) -> tuple[int, int]:
    """The counts already on the span: an SDK span shows its attributes (`attributes`),
    the API promises no reading, so a span that shows none starts at zero."""
    attributes = getattr(span, "attributes", None) or {}
    checks = attributes.get(CHECKS, 0)
    nudges = attributes.get(NUDGES, 0)
    return (
        checks if isinstance(checks, int) else 0,
        nudges if isinstance(nudges, int) else 0,
    )
