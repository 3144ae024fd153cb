"""The fixed vocabulary of finding kinds, their hallucination class and default severity.

The strings are part of the public contract (API, dashboard, eval reports): never rename one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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
    UNFETCHED_CITATION = "unfetched_citation"
    STALL = "stall"
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


@dataclass(frozen=True)
class KindInfo:
    hallucination_class: str
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
    Kind.UNFETCHED_CITATION: KindInfo("citation", Severity.REJECT),
    Kind.STALL: KindInfo("stall", Severity.REJECT),
    Kind.VALIDATOR_ERROR: KindInfo("-", Severity.INFO),
}

SEVERITY_RANK: dict[Severity, int] = {Severity.INFO: 0, Severity.FLAG: 1, Severity.REJECT: 2}
