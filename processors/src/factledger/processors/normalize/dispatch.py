"""Choose a span's attribute convention and normalize it.

The conventions are tried in a fixed order; the first whose marker the span carries
decides, so a span never gets two readings:

| order | convention      | marker                                                     |
|-------|-----------------|------------------------------------------------------------|
| 1     | `openinference` | `openinference.span.kind`                                  |
| 2     | `traceloop`     | `traceloop.span.kind`                                      |
| 3     | `vercel`        | `ai.operationId` (or an `ai.` operation with `ai.*` keys)  |
| 4     | `genai`         | `gen_ai.operation.name`, tool or agent name, prompt or     |
|       |                 | completion attributes, `llm.request.type`, message events  |
| 5     | `langfuse`      | `langfuse.observation.type`                                |
| 6     | `haystack`      | a `haystack.…` span name (Haystack's operation names) or a |
|       |                 | `haystack.*` attribute: Haystack's own tracer              |

Declared span kinds go first: frameworks that add GenAI attributes to OpenInference or
AI SDK spans (Google ADK, the AI SDK's `gen_ai.system`) are read by what they declared.
Haystack's own tracer goes last: its marker is a name prefix, weaker than any declared
convention's key, and an instrumentation's span that happens to carry a `haystack.*` tag
is read by the instrumentation's convention.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from ..spans import SpanRecord
from . import genai, haystack_tracer, langfuse, openinference, traceloop, vercel
from .base import NormalizedSpan

Convention = Literal["openinference", "traceloop", "vercel", "genai", "langfuse", "haystack"]

_Detector = Callable[[SpanRecord], bool]
_Reader = Callable[[SpanRecord], NormalizedSpan | None]

CONVENTIONS: tuple[tuple[Convention, _Detector, _Reader], ...] = (
    ("openinference", openinference.detects, openinference.normalize_openinference),
    ("traceloop", traceloop.detects, traceloop.normalize_traceloop),
    ("vercel", vercel.detects, vercel.normalize_vercel),
    ("genai", genai.detects, genai.normalize_genai),
    ("langfuse", langfuse.detects, langfuse.normalize_langfuse),
    ("haystack", haystack_tracer.detects, haystack_tracer.normalize_haystack_tracer),
)


def convention_of(span: SpanRecord) -> Convention | None:
    """The convention `normalize` reads the span with; None when the span has none."""
    try:
        for name, detects, _ in CONVENTIONS:
            if detects(span):
                return name
    except Exception:  # same contract as normalize: odd input never escapes as an error
        return None
    return None


def normalize(span: SpanRecord) -> NormalizedSpan | None:
    """What the span means for turn assembly, or None when it says nothing about a turn.

    Never raises: the readers tolerate malformed values (unreadable JSON yields what can be
    read), and anything they still trip over makes the span unreadable (None) rather than
    failing the batch it arrived in.
    """
    try:
        for _, detects, read in CONVENTIONS:
            if detects(span):
                return read(span)
    except Exception:  # isolate one odd span from the pipeline (see docstring)
        return None
    return None
