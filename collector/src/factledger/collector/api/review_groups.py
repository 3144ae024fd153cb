"""Near-duplicate suspicions: queue items that one label can cover.

An agent that hallucinates once usually does it again the same way: "I sent the e-mail to
Farah.", "I sent the e-mail to Dana.". Such turns ask the reviewer the same question, so
the queue shows them as one group. Two items are in one group when the same agent gave a
reply of the same *pattern* with the same finding kinds. The pattern is the reply with
whatever varies between such repeats masked: identifier-shaped tokens (SHAs, ids, URLs,
e-mail addresses), quoted text, numbers and capitalised words inside a sentence (names);
then case and spacing are folded. Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from factledger.processors.identifiers import extract_identifiers

MAX_PATTERN_CHARS = 4_000
"""Reply characters a pattern reads: replies that agree this far are repeats."""

_QUOTED = re.compile(r"\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`|“[^”\n]{0,200}”")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
# A capitalised word that does not open a sentence: a name, a product, a place.
_NAME = re.compile(r"(?<=[^\s.!?:\n]\s)[A-Z][\w'-]*")
_SPACE = re.compile(r"\s+")


def reply_pattern(reply: str) -> str:
    """The reply with its varying parts masked, lower-cased, spaces folded."""
    text = reply[:MAX_PATTERN_CHARS]
    pieces: list[str] = []
    at = 0
    for identifier in extract_identifiers(text):
        pieces.append(text[at : identifier.start])
        pieces.append("\x01id\x02")
        at = identifier.end
    pieces.append(text[at:])
    text = "".join(pieces)
    text = _QUOTED.sub("\x01quote\x02", text)
    text = _NAME.sub("\x01name\x02", text)
    text = _NUMBER.sub("\x01n\x02", text)
    text = _SPACE.sub(" ", text).strip().lower()
    # The masks were marked with control characters so that no later rule matched them.
    return text.replace("\x01", "‹").replace("\x02", "›")


def group_key(agent: str, kinds: Sequence[str], reply: str) -> str:
    """The id of an item's group: equal for the same agent, kinds and reply pattern."""
    digest = hashlib.blake2b(digest_size=8)
    for part in (agent, ",".join(sorted(set(kinds))), reply_pattern(reply)):
        digest.update(part.encode())
        digest.update(b"\x1f")
    return digest.hexdigest()


def group_queue(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Queue items (each with `agent`, `kinds`, `reply`) gathered into groups, in the
    order of each group's first item; items keep their order within a group. Each
    group: `{group_id, agent, kinds, pattern, size, turns}`, where `turns` are the items
    without their `reply` (the first one stands for the group)."""
    groups: dict[str, dict[str, Any]] = {}
    for item in items:
        reply = str(item.get("reply") or "")
        kinds = [str(kind) for kind in item.get("kinds") or ()]
        key = group_key(str(item.get("agent") or ""), kinds, reply)
        group = groups.get(key)
        if group is None:
            group = groups[key] = {
                "group_id": key,
                "agent": item.get("agent") or "",
                "kinds": sorted(set(kinds)),
                "pattern": reply_pattern(reply),
                "size": 0,
                "turns": [],
            }
        group["turns"].append({k: v for k, v in item.items() if k != "reply"})
        group["size"] += 1
    return list(groups.values())
