"""The access log without secrets: a request's path and query string (`?q=sk-...`,
`?conversation_id=<a session token>`) are logged as the redaction rules leave them,
also when the client percent-encoded them (`password%3D...`, `+` for a space)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import quote, unquote, unquote_plus

ACCESS_LOGGER = "uvicorn.access"
_PATH = 2
"""Where uvicorn's access record carries the path: (client, method, path, version, status)."""
_SAFE = "/:=,;@[]"
"""Kept as they are when a redacted piece is encoded again: the replacement stays legible."""


class RedactedPaths(logging.Filter):
    """Rewrites the path of each access record with `redact`; never drops a record."""

    def __init__(self, redact: Callable[[str], str]) -> None:
        super().__init__()
        self._redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) > _PATH:
            path = args[_PATH]
            if isinstance(path, str):
                record.args = (
                    *args[:_PATH],
                    redacted_target(path, self._redact),
                    *args[_PATH + 1 :],
                )
        return True


def redacted_target(target: str, redact: Callable[[str], str]) -> str:
    """`target` (path and query) with secrets replaced as sent and as decoded: the rules
    know `password=`, not `password%3D`. A piece (the path, or a `name=value` pair) that
    holds a secret only once decoded is logged decoded, redacted and encoded again; any
    other piece as it was sent."""
    path, mark, query = redact(target).partition("?")
    pieces = [_decoded_redacted(path, unquote, redact)]
    if mark:
        pairs = [_decoded_redacted(pair, unquote_plus, redact) for pair in query.split("&")]
        pieces.append("&".join(pairs))
    return "?".join(pieces)


def _decoded_redacted(
    piece: str, decode: Callable[[str], str], redact: Callable[[str], str]
) -> str:
    text = decode(piece)
    if text == piece:
        return piece
    cleaned = redact(text)
    return piece if cleaned == text else quote(cleaned, safe=_SAFE)


def redact_access_log(redact: Callable[[str], str]) -> None:
    """Put one `RedactedPaths` on uvicorn's access logger (replacing an earlier one)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    for old in [f for f in logger.filters if isinstance(f, RedactedPaths)]:
        logger.removeFilter(old)
    logger.addFilter(RedactedPaths(redact))
