"""Exceptions raised by the pure processing layer.

FactLedgerError
 ├── TranscriptError      a transcript cannot be read as a turn
 └── ConfigError          a settings or claim-rules file is invalid
"""

from __future__ import annotations


class FactLedgerError(Exception):
    """Base of every error FactLedger raises on purpose."""


class TranscriptError(FactLedgerError, ValueError):
    """A transcript is not a readable OpenAI-style chat; the message says where."""


class ConfigError(FactLedgerError, ValueError):
    """A settings or claim-rules file is invalid; the message names the file and key."""
