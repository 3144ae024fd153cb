"""The fixed vocabulary of finding kinds, their hallucination class and default severity.

The strings are part of the public contract (API, dashboard, eval reports): never rename one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal, get_args


class Kind(StrEnum):
    FABRICATED_IDENTIFIER = "fabricated_identifier"
    BORROWED_IDENTIFIER = "borrowed_identifier"
    ERROR_REPORTED_AS_SUCCESS = "error_reported_as_success"
    CLAIM_WITHOUT_TOOL = "claim_without_tool"
    UNREGISTERED_TOOL_CALL = "unregistered_tool_call"
    CITATION_UNREGISTERED_TOOL = "citation_unregistered_tool"
    CITATION_UNCALLED_TOOL = "citation_uncalled_tool"
    SUMMARY_WITHOUT_ACTION = "summary_without_action"
    MISSING_TOOL_ARGUMENTS = "missing_tool_arguments"
    UNGROUNDED_TOOL_ARGUMENT = "ungrounded_tool_argument"
    CONFABULATED_IDENTIFIER_SET = "confabulated_identifier_set"
    NEGATED_EXISTING_IDENTIFIER = "negated_existing_identifier"
    CONTRADICTED_RECORD_STATE = "contradicted_record_state"
    UNGROUNDED_QUANTITY = "ungrounded_quantity"
    UNFETCHED_CITATION = "unfetched_citation"
    STALL = "stall"
    PLACEHOLDER_AS_RESULT = "placeholder_as_result"
    PRESUPPOSED_ARTIFACT = "presupposed_artifact"
    VALIDATOR_ERROR = "validator_error"


class Severity(StrEnum):
    REJECT = "reject"
    FLAG = "flag"
    INFO = "info"


class Outcome(StrEnum):
    """A turn's verdict: the worst severity among its findings."""

    REJECT = "reject"
    FLAG = "flag"
    PASS = "pass"


HallucinationClass = Literal["1", "2", "3", "4", "4b", "5", "mirror", "citation", "stall"]
"""The classes of hallucination: seed 000's (1, 2, 3, 4, 4b, 5) plus mirror drift,
citations (seed 003) and stalls (seed 004). The API, the dashboard and the CLI show these
strings."""
HALLUCINATION_CLASSES: Final[tuple[HallucinationClass, ...]] = get_args(HallucinationClass)
CLASS_MEANINGS: Final[Mapping[HallucinationClass, str]] = {
    "1": "fabricated identifier or quantity",
    "2": "borrowed identifier",
    "3": "error reported as success",
    "4": "claim or citation without a tool call",
    "4b": "tool-argument drift",
    "5": "confabulated identifier set",
    "mirror": "negated existing identifier or contradicted record",
    "citation": "unfetched source",
    "stall": "a promise to act, and no tool call",
}
"""What each class means, in a few words (docs/validators.md gives each kind its rule)."""
UNCLASSIFIED: Final = "-"
"""The class of a kind that is no hallucination (`validator_error`), as stored."""
SUSPICION_CLASS: Final[HallucinationClass] = "5"
"""The class whose findings carry a suspicion score and go to the human review queue."""


@dataclass(frozen=True)
class KindInfo:
    hallucination_class: HallucinationClass | Literal["-"]
    default_severity: Severity


KIND_INFO: dict[Kind, KindInfo] = {
    Kind.FABRICATED_IDENTIFIER: KindInfo("1", Severity.REJECT),
    Kind.BORROWED_IDENTIFIER: KindInfo("2", Severity.REJECT),
    Kind.ERROR_REPORTED_AS_SUCCESS: KindInfo("3", Severity.REJECT),
    Kind.CLAIM_WITHOUT_TOOL: KindInfo("4", Severity.REJECT),
    Kind.UNREGISTERED_TOOL_CALL: KindInfo("4", Severity.REJECT),
    Kind.CITATION_UNREGISTERED_TOOL: KindInfo("4", Severity.REJECT),
    Kind.CITATION_UNCALLED_TOOL: KindInfo("4", Severity.REJECT),
    Kind.SUMMARY_WITHOUT_ACTION: KindInfo("4", Severity.REJECT),
    Kind.MISSING_TOOL_ARGUMENTS: KindInfo("4b", Severity.FLAG),
    Kind.UNGROUNDED_TOOL_ARGUMENT: KindInfo("4b", Severity.FLAG),
    Kind.CONFABULATED_IDENTIFIER_SET: KindInfo("5", Severity.FLAG),
    Kind.NEGATED_EXISTING_IDENTIFIER: KindInfo("mirror", Severity.REJECT),
    Kind.CONTRADICTED_RECORD_STATE: KindInfo("mirror", Severity.REJECT),
    Kind.UNGROUNDED_QUANTITY: KindInfo("1", Severity.FLAG),
    Kind.UNFETCHED_CITATION: KindInfo("citation", Severity.REJECT),
    Kind.STALL: KindInfo("stall", Severity.REJECT),
    Kind.PLACEHOLDER_AS_RESULT: KindInfo("1", Severity.REJECT),
    Kind.PRESUPPOSED_ARTIFACT: KindInfo("4", Severity.FLAG),
    Kind.VALIDATOR_ERROR: KindInfo(UNCLASSIFIED, Severity.INFO),
}


def hallucination_class_of(stored: str) -> HallucinationClass | None:
    """A stored class as shown: one of HALLUCINATION_CLASSES, or None for a kind without
    one (`UNCLASSIFIED`)."""
    # A loop rather than `in`, so that the type narrows to the Literal.
    for known in HALLUCINATION_CLASSES:
        if stored == known:
            return known
    return None


def describe_classes() -> str:
    """Every class with its meaning, in order, as one line of prose: `1 fabricated
    identifier or quantity, ..., mirror (negated existing identifier or contradicted
    record), ...`."""
    return ", ".join(
        f"{name} {meaning}" if name[0].isdigit() else f"{name} ({meaning})"
        for name, meaning in CLASS_MEANINGS.items()
    )


SEVERITY_RANK: dict[Severity, int] = {Severity.INFO: 0, Severity.FLAG: 1, Severity.REJECT: 2}
