"""FactLedger: catch LLM agents that report what their tools never did.

The in-loop guard is the public API for agent frameworks:

    from factledger import check
    result = check({"model": ..., "tools": [...], "messages": [...]})
    result.outcome, result.findings, result.nudge, result.annotate()
"""

from factledger.processors.guard import CheckResult, annotate_reply, check
from factledger.processors.kinds import Kind, Outcome, Severity
from factledger.processors.model import Finding, ToolCall, ToolDefinition, Turn, Verdict
from factledger.processors.transcript import turn_from_transcript

__all__ = [
    "CheckResult",
    "Finding",
    "Kind",
    "Outcome",
    "Severity",
    "ToolCall",
    "ToolDefinition",
    "Turn",
    "Verdict",
    "annotate_reply",
    "check",
    "turn_from_transcript",
]
__version__ = "0.1.0"
