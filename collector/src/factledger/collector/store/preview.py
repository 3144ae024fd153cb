"""The window of a reply a turn list shows: around the first flagged token, so a long
reply whose finding sits past its first sentences still shows what was flagged. Pure
functions of strings; the store supplies the reply and the finding's offsets."""

from __future__ import annotations

WINDOW_CHARS = 200
"""Characters a window holds, as the stored reply_preview (a reply's first 200)."""
LEAD_CHARS = 40
"""Context kept before the flagged token: a table cell of 80 characters still shows it."""
ELLIPSIS = "…"


def flagged_window(reply: str, start: int, end: int) -> str:
    """`reply` cut to at most WINDOW_CHARS characters that begin at most LEAD_CHARS
    before `reply[start:end]`, the first flagged token; a window that starts after the
    reply's start begins at a whole word and with `…`. Offsets outside the reply give
    its first WINDOW_CHARS characters, as the stored preview."""
    if not 0 <= start < end <= len(reply) or start <= LEAD_CHARS:
        return reply[:WINDOW_CHARS]
    begin = start - LEAD_CHARS
    if not reply[begin - 1].isspace():
        # The cut landed inside a word: start after it (never past the token itself).
        space = next((i for i in range(begin, start) if reply[i].isspace()), start - 1)
        begin = space + 1
    return ELLIPSIS + reply[begin : begin + WINDOW_CHARS - len(ELLIPSIS)]
