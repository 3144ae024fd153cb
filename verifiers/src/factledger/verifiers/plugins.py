"""Your own systems as sources of truth: a plugin is one callable, named by import path.

A plugin check is called with what to check and its context, and says whether it exists:

    check(subject: Subject, turn: Turn, timeout: float) -> PluginAnswer | None

It returns None for a subject it has no source for (the next verifier is asked), else a
`PluginAnswer`: `exists` True or False (None when it could not tell, with a `reason`),
the `query` it asked and the `answer` it got, as evidence. It should return within
`timeout` seconds; the adapter stops waiting then either way. Settings name it as
`package.module:attribute`: a function, or a class instantiated once with the plugin's
options mapping (its instances are the checks). For example:

    # acme_checks.py
    from factledger.verifiers.plugins import PluginAnswer

    def ticket_exists(subject, turn, timeout):
        if subject.kind != "record" or not subject.name.startswith("OPS-"):
            return None  # not a ticket: another source may know it
        found = tracker.lookup(subject.name, timeout=timeout)  # your client
        return PluginAnswer(exists=found, query=f"tracker lookup {subject.name}",
                            answer="found" if found else "no such ticket")

    verifier = load_plugin("acme_checks:ticket_exists", name="tickets")

`PluginAnswer` becomes a `Verification` (`source` `plugin:tickets`) with the outcome
`existence_outcome` gives, so a claimed-absent subject is handled for the plugin. A
plugin that raises, returns something else, or overruns its timeout gives unverifiable
(`plugin error`, `timeout`); nothing it does escapes `verify`. `json_lookup` is a plugin
shipped as an example: a ticket or order service asked over HTTP.
"""

from __future__ import annotations

import importlib
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from factledger.processors.model import Turn
from factledger.processors.verification.base import (
    Subject,
    Verification,
    VerificationOutcome,
    existence_outcome,
)


@dataclass(frozen=True)
class PluginAnswer:
    """A plugin's answer: `exists` None means it could not tell, and `reason` says why
    (`retryable` when asking again later may tell)."""

    exists: bool | None
    query: str = ""
    answer: str = ""
    reason: str = ""
    retryable: bool = False


PluginCheck = Callable[[Subject, Turn, float], PluginAnswer | None]


class PluginError(ValueError):
    """A plugin named in the settings that cannot be loaded; the message names its path."""


_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
_MAX_EVIDENCE_CHARS = 2000
_UNSET = object()


class PluginVerifier:
    """A `Verifier` around a plugin check: runs it in a worker thread bounded by the
    timeout, and turns what it returns (or raises) into a `Verification`.

    At most `max_in_flight` calls run at once; a call that overran its timeout still
    holds its place until it returns, so a plugin that hangs cannot pile up threads:
    past that, checks answer unverifiable `busy` at once.
    """

    def __init__(self, name: str, check: PluginCheck, *, max_in_flight: int = 4) -> None:
        self._name = name
        self._check = check
        self._slots = threading.BoundedSemaphore(max_in_flight)

    @property
    def name(self) -> str:
        return f"plugin:{self._name}"

    def verify(self, subject: Subject, turn: Turn, timeout: float) -> Verification | None:
        checked_at = time.time()
        started = time.monotonic()
        if not self._slots.acquire(blocking=False):
            answer = PluginAnswer(exists=None, reason="busy", retryable=True)
            return self._verification(subject, answer, checked_at, started)
        result: dict[str, Any] = {}

        def run() -> None:
            try:
                result["value"] = self._check(subject, turn, timeout)
            except BaseException as error:
                result["error"] = error
            finally:
                self._slots.release()

        worker = threading.Thread(target=run, name=f"factledger-{self.name}", daemon=True)
        worker.start()
        worker.join(max(timeout, 0.0))
        if worker.is_alive():
            answer = PluginAnswer(exists=None, reason="timeout", retryable=True)
            return self._verification(subject, answer, checked_at, started)
        if "error" in result:
            # The exception's type only: its message may carry what the plugin was given.
            kind = type(result["error"]).__name__
            answer = PluginAnswer(exists=None, answer=kind, reason="plugin error", retryable=True)
            return self._verification(subject, answer, checked_at, started)
        value = result.get("value", _UNSET)
        if value is None:
            return None
        if not isinstance(value, PluginAnswer):
            answer = PluginAnswer(
                exists=None, answer=f"returned {type(value).__name__}", reason="plugin error"
            )
            return self._verification(subject, answer, checked_at, started)
        return self._verification(subject, value, checked_at, started)

    def _verification(
        self, subject: Subject, answer: PluginAnswer, checked_at: float, started: float
    ) -> Verification:
        settled = answer.exists is not None
        return Verification(
            subject=subject,
            outcome=(
                existence_outcome(subject, bool(answer.exists))
                if settled
                else VerificationOutcome.UNVERIFIABLE
            ),
            source=self.name,
            query=str(answer.query)[:_MAX_EVIDENCE_CHARS],
            answer=str(answer.answer)[:_MAX_EVIDENCE_CHARS],
            checked_at=checked_at,
            duration_ms=(time.monotonic() - started) * 1000.0,
            reason="" if settled else (answer.reason or "no answer"),
            retryable=False if settled else answer.retryable,
        )


def load_plugin(
    spec: str, options: Mapping[str, Any] | None = None, *, name: str | None = None
) -> PluginVerifier:
    """The verifier for the plugin at `spec` (`package.module:attribute`).

    A class is instantiated with `options` (its settings table); a function takes none.
    `name` (the settings' name for it) defaults to the check's `name` attribute, else the
    attribute's name. Raises `PluginError` naming `spec` when it cannot be imported, is
    not there, is not callable, or its class refuses the options.
    """
    if not _SPEC.fullmatch(spec):
        raise PluginError(f"plugin {spec!r}: expected 'package.module:attribute'")
    module_name, attribute = spec.split(":", 1)
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as error:
        raise PluginError(f"plugin {spec!r}: cannot import {module_name!r}: {error}") from error
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise PluginError(f"plugin {spec!r}: {module_name!r} has no {attribute!r}") from None
    if isinstance(target, type):
        try:
            target = target(dict(options or {}))
        except Exception as error:
            raise PluginError(f"plugin {spec!r}: bad options: {error}") from error
    elif options:
        raise PluginError(f"plugin {spec!r}: a function takes no options; make it a class")
    if not callable(target):
        raise PluginError(f"plugin {spec!r}: {attribute!r} is not callable")
    own_name = getattr(target, "name", None)
    chosen = name or (own_name if isinstance(own_name, str) and own_name else attribute)
    # What it returns is checked at each call (anything but a PluginAnswer or None is a
    # `plugin error`), so the declared type is the contract, not a promise.
    return PluginVerifier(chosen, cast(PluginCheck, target))
