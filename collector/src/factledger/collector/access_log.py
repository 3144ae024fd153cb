"""The access log without secrets: a request's path and query string (`?q=sk-...`,
`?conversation_id=<a session token>`) are logged as the redaction rules leave them."""

from __future__ import annotations

import logging
from collections.abc import Callable

ACCESS_LOGGER = "uvicorn.access"
_PATH = 2
"""Where uvicorn's access record carries the path: (client, method, path, version, status)."""


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
                record.args = (*args[:_PATH], self._redact(path), *args[_PATH + 1 :])
        return True


def redact_access_log(redact: Callable[[str], str]) -> None:
    """Put one `RedactedPaths` on uvicorn's access logger (replacing an earlier one)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    for old in [f for f in logger.filters if isinstance(f, RedactedPaths)]:
        logger.removeFilter(old)
    logger.addFilter(RedactedPaths(redact))
