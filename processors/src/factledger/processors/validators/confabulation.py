"""Class 5: a coherent set of names presented as existing, none of which a tool showed.

The hardest class to catch: five plausible `test_memory_*.py` files, a `tools/` directory,
a `build_registry(cfg)` function, all consistent and all invented. Token matching alone
cannot prove it, so this validator only raises a suspicion (`flag`) with a score, for a
human to confirm. Proposals ("I'd create tests/test_cache.py") are not claims of existence,
nor are plans ("We will filter by the `sale_date` column": first-person intent, the same
class as "I'll"), nor the keys of structured output the reply writes (a progress ledger, a
plan object, tool-like JSON): a `"next_speaker":` key is schema, not a name presented as
existing. The values of such output are still read.

Every finding of a set carries the set's names that a tool result does show, each with
the call that shows it (`Finding.real`): the real names the invented ones stand beside.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from ..codeish import CodeName, code_names, name_grounded
from ..evidence.result_tokens import name_source
from ..kinds import Kind
from ..model import Finding, Turn
from ..text import list_header, sentence_around
from .base import NO_TOOL_CALLS, finding

_PROPOSAL = re.compile(
    r"\b(?:I'd|I would|I could|I can|I'll|I will|we could|we should|we can|we'll|you could|"
    r"we will|we'd|we are going to|we're going to|I am going to|I'm going to|let us|"
    r"we need to|I need to|we must|we have to|"
    r"you can|you should|you might|you may|you'd|let's|consider|suggest\w*|propos\w*|"
    r"recommend\w*|plan\w*|would|could|should|might|e\.g\.|for example|such as|typically|"
    r"usually|for instance|example|könnte\w*|würde\w*|sollte\w*|vorschlag\w*|empfehle\w*|"
    r"beispiel\w*|werde|wird)\b|^[\W\d]*(?:create|add|write|make|rename|put|move|use|try|run|"
    r"erstelle|lege|füge)\b|建议|可以|应该|例如|比如|打算|将会",
    re.IGNORECASE,
)
_EXISTENCE = re.compile(
    r"\b(?:existing|exists?|currently|already|there (?:are|is)|i found|we found|found|contains?|"
    r"includes?|has the following|here (?:are|is)|exposes?|defines?|declares?|exports?|"
    r"provides?|implements?|passing|passed|failing|the (?:repo|repository|project|codebase|"
    r"directory|folder|module|package)|vorhanden|enthält|existier\w*|gibt es)\b"
    r"|现有|包含|已有|存在",
)
_LISTING_TOOL = re.compile(r"list|ls|tree|glob|find|read|search|grep|cat|open|show|dir", re.I)
_MIN_SET = 3
_MAX_REAL = 20
"""Real names of a set recorded with each of its findings, at most."""


class ConfabulationValidator:
    name = "confabulation"
    version = "1.1"
    kinds = frozenset({Kind.CONFABULATED_IDENTIFIER_SET})

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        names = _asserted_names(turn.reply)
        if len(names) < 2:
            return ()
        haystack = turn.evidence_lower + "\n" + turn.named_lower
        ungrounded = [n for n in names if not name_grounded(n.text, haystack)]
        patterned = _shared_pattern(ungrounded)
        if len(ungrounded) < _MIN_SET and not (len(ungrounded) >= 2 and patterned):
            return ()
        # With tool calls the reply reports what it observed; without any, it needs wording
        # that presents the names as existing ("the repo contains", "exposes").
        listing = any(_LISTING_TOOL.search(c.name) for c in turn.executed_calls)
        if not (turn.executed_calls or _EXISTENCE.search(turn.reply_lower)):
            return ()
        score = _score(len(ungrounded), len(names), patterned, listing)
        listed = ", ".join(n.text for n in ungrounded[:10])
        invented = {n.text for n in ungrounded}
        real = [
            source
            for text in dict.fromkeys(n.text for n in names if n.text not in invented)
            if (source := name_source(text, turn)) is not None
        ][:_MAX_REAL]
        return [
            finding(
                self,
                Kind.CONFABULATED_IDENTIFIER_SET,
                f"`{n.text}` is one of {len(ungrounded)} names presented as existing that no "
                f"tool result shows ({listed})",
                token=n.text,
                span=(n.start, n.end),
                checked_against=(c.name for c in turn.executed_calls),
                nothing_checked=NO_TOOL_CALLS,
                score=score,
                real=real,
            )
            for n in ungrounded
        ]


def _asserted_names(reply: str) -> list[CodeName]:
    """Names outside proposals. A proposal is a sentence with proposal wording, or a
    bullet under a line like "I'd add these files:". Only the lines around names are read,
    so a long reply costs one lookup per name, not one per line."""
    keep = []
    for name in code_names(reply, snake_case=True):
        if _is_key(reply, name):
            continue
        sentence = sentence_around(reply, name.start)
        if _PROPOSAL.search(sentence.text) or _under_proposal_header(reply, name.start):
            continue
        keep.append(name)
    return keep


_KEY_END = re.compile(r"""["']\s*:""")


def _is_key(reply: str, name: CodeName) -> bool:
    """The name is a key of structured output the reply writes (`"name": ...` in a JSON
    object or `'name': ...` in a Python dict): schema, not a thing said to exist."""
    return (
        name.start > 0
        and reply[name.start - 1] in "\"'"
        and _KEY_END.match(reply, name.end) is not None
    )


def _under_proposal_header(reply: str, position: int) -> bool:
    """True when `position` is in a bullet list whose header line proposes."""
    header = list_header(reply, position)
    return header is not None and _PROPOSAL.search(header) is not None


def _shared_pattern(names: list[CodeName]) -> bool:
    """At least two names share a stem of 5+ characters (test_memory_*, tools/*)."""
    bases = [os.path.basename(n.text.rstrip("/")).lower() for n in names]
    for i, a in enumerate(bases):
        for b in bases[i + 1 :]:
            if _common_prefix_length(a, b) >= 5:
                return True
    dirs = [n.text.rsplit("/", 1)[0] for n in names if "/" in n.text.rstrip("/")]
    return len(dirs) != len(set(dirs))


def _common_prefix_length(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def _score(ungrounded: int, total: int, patterned: bool, listing: bool) -> float:
    score = 0.3 + 0.1 * min(ungrounded, 5)
    score += 0.15 if patterned else 0.0
    score += 0.15 if listing else 0.0
    score -= 0.2 if ungrounded * 2 < total else 0.0
    return round(max(0.0, min(1.0, score)), 2)
