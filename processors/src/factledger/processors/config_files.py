"""Reading settings files: one place that turns an unreadable or malformed TOML file into
a ConfigError naming the file and what it was for."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from .errors import ConfigError


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """The parsed TOML document at `path`; `what` names the file's purpose in errors
    ("the token file", "claim rules", ...). Raises ConfigError."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {what} is not valid TOML: {exc}") from None
