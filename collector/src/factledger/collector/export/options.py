"""Reading a target's `[export.<name>]` settings table.

A missing or malformed option raises ValueError naming the key alone: values may be
credentials, and a start-up error is logged.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit


def text(options: Mapping[str, object], key: str, default: str | None = None) -> str:
    """The non-empty string at `key`, or `default` when it is absent."""
    value = options.get(key)
    if value is None:
        if default is None:
            raise ValueError(f"export option {key!r} is required")
        return default
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"export option {key!r} must be a non-empty string")
    return value.strip()


def optional_text(options: Mapping[str, object], key: str) -> str | None:
    """The non-empty string at `key`, or None when it is absent."""
    if options.get(key) is None:
        return None
    return text(options, key)


def base_url(options: Mapping[str, object], key: str, default: str | None = None) -> str:
    """An http(s) URL with a host at `key`, without a trailing slash."""
    value = text(options, key, default)
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"export option {key!r} must be an http(s) URL")
    return value.rstrip("/")
