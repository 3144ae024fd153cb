"""FactLedger: catch LLM agents that report what their tools never did.

The in-loop guard is the public API for agent frameworks:

    from factledger import check
    result = check({"model": ..., "tools": [...], "messages": [...]})
    result.outcome, result.findings, result.nudge, result.annotate()
"""

from pkgutil import extend_path

# factledger.collector, .processors, .dashboard and .schemas live in the top-level folders of
# a checkout (collector/src/factledger/collector/...); installed, they share one directory.
__path__ = extend_path(__path__, __name__)

# First, before anything imports factledger.processors: its import puts the compiled modules'
# finder in place when a fresh build is there (factledger/compiled.py).
from factledger import _use_compiled  # noqa: F401
from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.guard import CheckResult, annotate_reply, check
from factledger.processors.kinds import Kind, Outcome, Severity
from factledger.processors.model import Finding, ToolCall, ToolDefinition, Turn, Verdict

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
