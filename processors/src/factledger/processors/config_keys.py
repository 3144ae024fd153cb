"""How a configuration error names a key: only the wrong one, and only when it reads as a
setting name.

A file pointed at by mistake (a tokens file given as the rules file, a `.env` turned
TOML) may hold secrets as its keys or values, and start-up errors end up in logs and
terminals. So an error names the first unknown key when it looks like a setting's name (a
letter, then letters, `_`, `-`, `.` and at most two digits, 40 characters at most), says
only "a key" otherwise, counts the rest, and never shows a value or the other keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,39}")
_SECRET_LOOKING = re.compile(r"[0-9].*[0-9].*[0-9]")  # random strings have digits


def key_name(key: str) -> str:
    """`key` quoted when it reads as a setting name, else a neutral stand-in."""
    if _NAME.fullmatch(key) and not _SECRET_LOOKING.search(key):
        return repr(key)
    return "a key that is no setting name"


def unknown_keys(unknown: Iterable[str]) -> str:
    """ "unknown keys: 'verbs'", "unknown keys: 'verbs' and 2 more"."""
    names = sorted(unknown)
    more = f" and {len(names) - 1} more" if len(names) > 1 else ""
    return f"unknown keys: {key_name(names[0])}{more}"
