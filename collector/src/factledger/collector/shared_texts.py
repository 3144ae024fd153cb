"""One object for each long attribute text that spans keep repeating, and for each name.

An agent sends its system instructions and tool definitions with every LLM call of every
conversation, and an agent span repeats the messages of its first and last calls: most of
a GenAI span's bytes are texts that other spans hold too. Decoded from a request, each is
a new `str`; `shared_text` hands out the one seen lately instead, so the spans waiting to
be stored, and a chunk of them pickled to a judge worker (pickle writes an object once,
then refers to it), hold and send the text once. Measured on the ingest benchmark's spans:
2.7 → 1.6 KB pickled per span, 28 → 23 KB held per turn waiting in the worker; with the
names shared too (`shared_name`), 1.2 KB and 18 KB.

What is kept is bounded in texts and in the length of each; the oldest goes first. Equal
texts are interchangeable (`str` is immutable), so which object a span gets never changes
what it says. Safe from every decoding thread at once.
"""

from __future__ import annotations

import sys
import threading

MIN_CHARS = 256
"""Shorter texts are left as they are: hashing them costs about what sharing saves."""
MAX_CHARS = 64 * 1024
"""Longer texts are left as they are: one is rarely sent twice, and keeping it is costly."""
MAX_TEXTS = 4096
"""Texts kept for sharing, at most (at most MAX_TEXTS * MAX_CHARS characters, usually a
few MB: GenAI attributes run to a few KB)."""


class SharedTexts:
    """Equal long texts as one object: the first seen, while it is among the last
    `max_texts` kept."""

    def __init__(self, max_texts: int = MAX_TEXTS) -> None:
        self._max_texts = max(1, max_texts)
        self._texts: dict[str, str] = {}
        self._lock = threading.Lock()

    def __call__(self, text: str) -> str:
        """`text`, or an equal text seen before."""
        if not MIN_CHARS <= len(text) <= MAX_CHARS:
            return text
        seen = self._texts.get(text)
        if seen is not None:
            return seen
        with self._lock:
            texts = self._texts
            seen = texts.setdefault(text, text)
            if len(texts) > self._max_texts:
                del texts[next(iter(texts))]  # the oldest
        return seen

    def __len__(self) -> int:
        return len(self._texts)


shared_text = SharedTexts()
"""The decoders' instance: texts repeat across requests, so one for the process."""


def shared_name(name: str) -> str:
    """One object for each attribute key and span or scope name.

    Names come from a small set (a span of the ingest benchmark repeats its 17 keys on
    every span), so each is interned: decoded afresh, a span's keys were a quarter of what
    it held waiting in a judge worker and of its pickled bytes. Interned strings die with
    their last holder (CPython keeps no other reference), so a sender that invents names
    costs nothing once its spans are gone.
    """
    return sys.intern(name)
