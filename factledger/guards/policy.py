"""The loop policy every framework adapter shares: given the turn so far, what to do.

    policy = GuardPolicy(max_nudges=2)
    decision = policy.decide(transcript)       # the turn as OpenAI-style messages
    match decision.action:
        case "pass":     reply = decision.reply      # untouched, no extra model call
        case "nudge":    retry with decision.nudge   # as the framework's retry message
        case "annotate": reply = decision.reply      # the reply with its footnote
        case "raise":    raise decision.error()

The transcript is the turn as the framework holds it: the user's request, the assistant
steps with their tool calls, the tool results (errors marked `"is_error": true`), the
nudges already sent (user messages that start with the nudge marker) and, last, the reply
under test. The nudges it holds are the retries spent: the policy counts them itself, so
an adapter keeps no state of its own between the model's attempts.

The decision, by the check's answer (`factledger.processors.guard.check`):
- clean: `pass`, the reply as it is;
- a rejection with a nudge, fewer than `max_nudges` nudges sent: `nudge`;
- a rejection still there after `max_nudges` nudges: `annotate` with the escalated
  footnote (`after_self_correction=True`), or `raise` when `on_exhausted="raise"`;
- a flag (or a rejection without a nudge): `annotate` with the first footnote;
- identifiers quoted from the user's message: `annotate` with the echo footnote, no nudge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from factledger.processors.errors import FactLedgerError
from factledger.processors.guard import CheckResult, check
from factledger.processors.kinds import Kind
from factledger.processors.model import Turn
from factledger.processors.nudges import NUDGE_MARKER, is_framework_nudge
from factledger.processors.runner import ValidationRunner
from factledger.processors.verification.base import Verifier

Action = Literal["pass", "nudge", "annotate", "raise"]
OnExhausted = Literal["footnote", "raise"]

FAILED_CALL_TEXT = 300
"""Characters of a failed call's own answer quoted in the nudge: enough for the error's
first sentence, short enough that the nudge stays a correction, not a log."""


class GuardOptions(TypedDict, total=False):
    """The keywords every adapter takes, as `GuardPolicy`'s fields (defaults there)."""

    max_nudges: int
    on_exhausted: OnExhausted
    verifiers: Sequence[Verifier]
    budget_seconds: float
    runner: ValidationRunner | None


class GuardExhausted(FactLedgerError):
    """The reply was still rejected after `max_nudges` nudges and the guard was set to
    raise (`on_exhausted="raise"`). `decision` holds the check and the reply."""

    def __init__(self, decision: Decision) -> None:
        kinds = ", ".join(decision.result.verdict.kinds) or "rejected"
        super().__init__(
            f"the reply is still rejected ({kinds}) after {decision.nudges_sent} "
            "self-correction nudge(s)"
        )
        self.decision = decision


@dataclass(frozen=True)
class Decision:
    """What the guard concluded about one attempt of the model's reply."""

    action: Action
    reply: str
    """The reply to hand on: unchanged for `pass` and `nudge`, footnoted for `annotate`."""
    nudge: str | None
    """The framework message to retry with (`nudge` only)."""
    nudges_sent: int
    """Nudges of this turn before this attempt."""
    result: CheckResult

    @property
    def outcome(self) -> str:
        """The check's verdict on this attempt: `pass`, `flag` or `reject`."""
        return self.result.outcome.value

    def error(self) -> GuardExhausted:
        """The error a guard set to raise raises for this decision."""
        return GuardExhausted(self)


@dataclass(frozen=True)
class GuardPolicy:
    """The options of the guard, and the one function that applies them (`decide`).

    `verifiers` and `budget_seconds` are handed to `check` as they are: names are settled
    at those sources of truth before the decision. `runner` replaces the default
    validators. Frozen: one policy serves every run of an agent, on any thread."""

    max_nudges: int = 2
    on_exhausted: OnExhausted = "footnote"
    verifiers: Sequence[Verifier] = ()
    budget_seconds: float = 5.0
    runner: ValidationRunner | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.max_nudges < 0:
            raise ValueError(f"max_nudges must be 0 or more, not {self.max_nudges}")
        if self.on_exhausted not in ("footnote", "raise"):
            raise ValueError(
                f"on_exhausted must be 'footnote' or 'raise', not {self.on_exhausted!r}"
            )

    def decide(
        self, transcript: Mapping[str, Any] | Turn, *, nudges_sent: int | None = None
    ) -> Decision:
        """The decision on the transcript's last assistant message. `nudges_sent` defaults
        to the nudges the transcript holds since the user's request (`nudges_in`)."""
        if nudges_sent is None:
            nudges_sent = 0 if isinstance(transcript, Turn) else nudges_in(transcript)
        result = check(
            transcript,
            runner=self.runner,
            verifiers=self.verifiers,
            budget_seconds=self.budget_seconds,
        )
        if result.nudge is not None:
            if nudges_sent < self.max_nudges:
                nudge = result.nudge + failed_calls_note(result)
                return Decision("nudge", result.turn.reply, nudge, nudges_sent, result)
            if self.on_exhausted == "raise":
                return Decision("raise", result.turn.reply, None, nudges_sent, result)
        corrected = nudges_sent > 0
        reply = result.annotate(after_self_correction=corrected and not result.ok)
        action: Action = "pass" if reply == result.turn.reply else "annotate"
        return Decision(action, reply, None, nudges_sent, result)


def nudges_in(transcript: Mapping[str, Any]) -> int:
    """The nudges a transcript holds after its last user request (a message of the user
    that is not itself a nudge): the retries this turn has spent."""
    messages = transcript.get("messages")
    if not isinstance(messages, list):
        return 0
    count = 0
    for message in reversed(messages):
        if not isinstance(message, Mapping):
            continue
        text = message.get("content")
        if not isinstance(text, str):
            continue
        if is_framework_nudge(text):
            count += 1
        elif message.get("role") == "user":
            break
    return count


def failed_calls_note(result: CheckResult) -> str:
    """A sentence per tool call whose failure the reply reported as a success: the call by
    name and what it answered, so the model sees which call failed and why."""
    failed_ids = {
        f.call_id
        for f in result.findings
        if f.kind is Kind.ERROR_REPORTED_AS_SUCCESS and f.call_id is not None
    }
    notes = [
        f"\nThe call `{call.name}` failed; it answered: {(call.result or '')[:FAILED_CALL_TEXT]}"
        for call in result.turn.tool_calls
        if call.call_id in failed_ids
    ]
    return "".join(notes)


def marked(text: str) -> bool:
    """True for a framework's retry message that carries a FactLedger nudge anywhere in
    it (frameworks wrap the message they were given: "Validation feedback: ...")."""
    return NUDGE_MARKER in text


def as_sent(text: str) -> str:
    """A wrapped nudge as FactLedger wrote it: from its marker on (other text unchanged),
    so the transcript's turn still starts at the user's request."""
    at = text.find(NUDGE_MARKER)
    return text[at:] if at > 0 else text
