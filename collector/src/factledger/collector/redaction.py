"""Redaction: secrets (and optionally e-mail addresses and phone numbers) replaced by
`[REDACTED:<rule>]` in everything FactLedger stores.

Validation runs on the raw turn in memory, so grounding still compares the real values;
only the copies handed to row shaping are redacted: span and event names, span attributes
(resource, span, event; bytes values scanned as text), status messages, a turn's agent,
model, service, request, reply and tool calls, and findings' messages, tokens and
evidence, with each finding's character offsets moved to the redacted reply. A
conversation id that holds a secret is replaced whole by a pseudonym (`identifier`), the
same in spans and turns.

Rules (secret_rules.py) are regular expressions with literal anchors: a rule runs only on
text that contains one of its anchors. One compiled pass over the text (an RE2 set of
every anchor and of the literal each other built-in pattern starts with) tells which rules
can match, so the common span (no secret) costs one scan instead of one per anchor and
per rule. A rule whose matches start within a few characters of an anchor (`Rule.lead`)
is tried only there, not at every character of the text. Every pattern is linear: bounded
repetitions, no nested quantifiers. Attribute keys that name a secret
(`http.request.header.authorization`, `...password`, ...) have their whole value replaced.
Configuration (FACTLEDGER_REDACTION, TOML)::

    [redaction]
    enabled = true              # false: store everything as received
    emails = false              # also redact e-mail addresses
    phones = false              # also redact phone numbers
    disable = ["jwt"]           # built-in rules to leave out (names below)
    keys = ["x-internal-auth"]  # more attribute key endings whose value is a secret
    [[redaction.patterns]]      # more rules; `group` picks the part replaced
    name = "employee_id"
    pattern = 'EMP-\\d{6}'
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from factledger.collector.secret_rules import (
    OPTIONAL_RULES,
    SECRET_KEY_ENDINGS,
    SECRET_RULES,
    Rule,
)
from factledger.processors.config_files import read_toml
from factledger.processors.errors import ConfigError
from factledger.processors.evidence.outcomes import call_succeeded
from factledger.processors.evidence.result_tokens import Backing
from factledger.processors.evidence.snapshots import CitationBacking, Snapshot
from factledger.processors.model import Finding, ResultToken, TextRange, ToolCall, Turn, Verdict
from factledger.processors.normalize.values import CONVERSATION_KEYS
from factledger.processors.spans import SpanRecord
from factledger.processors.verification.base import Verification

__all__ = [
    "MIN_SCAN_CHARS",
    "MIN_SECRET_CHARS",
    "OPTIONAL_RULES",
    "SECRET_KEY_ENDINGS",
    "SECRET_RULES",
    "Edit",
    "Redactor",
    "Rule",
]

MIN_SCAN_CHARS = 6
"""Shorter strings hold no secret any rule knows: they are not scanned."""
MIN_SECRET_CHARS = 4
"""A value under a secret's key shorter than this is not looked for in other texts."""


Edit = tuple[int, int, str]
"""Characters [start, end) of a text and what replaces them."""


class Redactor:
    """Applies `rules` to text and `secret_keys` to attribute keys. Safe to share between
    threads: its rules never change, and its memos (attribute keys that name a secret,
    long texts found clean) are bounded and only ever hold answers the rules give. Pickles
    without its memos (the judge worker gets a copy)."""

    def __init__(self, rules: Sequence[Rule], secret_keys: Iterable[str] = SECRET_KEY_ENDINGS):
        self._rules = tuple(rules)
        self._all_joinable = all(rule.joinable for rule in self._rules)
        self._keys = frozenset(k.lower() for k in secret_keys)
        self._prepare()

    def _prepare(self) -> None:
        # Compiled here rather than pickled: an RE2 set does not pickle.
        self._prefilter = _Prefilter(self._rules)
        # Attribute keys repeat on every span: remember which name a secret (bounded).
        self._secret_key_memo: dict[str, bool] = {}
        # Long texts found clean, oldest first (bounded); see `_all_clean`.
        self._clean_memo: dict[str, None] = {}
        self._clean_memo_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k in _PICKLED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._prepare()

    @classmethod
    def default(cls) -> Redactor:
        """The built-in secret rules and secret attribute keys."""
        return cls(SECRET_RULES)

    @classmethod
    def load(cls, path: Path | None) -> Redactor | None:
        """The redactor a settings file describes (None: the built-in secret rules). Returns
        None when the file switches redaction off. Raises ConfigError."""
        if path is None:
            return cls.default()
        data = read_toml(path, "the redaction settings")
        section = data.get("redaction", {})
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: [redaction] must be a table")
        return _from_section(section, str(path))

    # --- text -----------------------------------------------------------------------------

    def edits(self, text: str, known: Sequence[str] = ()) -> list[Edit]:
        """The non-overlapping replacements for `text`, in order. `known` are secrets found
        by their key elsewhere (a tool argument named `password`): replaced wherever they
        occur, since no rule would recognise them without their key."""
        found: list[tuple[int, int, str]] = []
        rules = self._prefilter.rules_for(text) if len(text) >= MIN_SCAN_CHARS else ()
        lowered = text.lower() if any(r.lead is not None for r in rules) else ""
        anchorable = bool(lowered) and _anchors_are_exact(text)
        for rule in rules:
            lead = rule.lead if anchorable else None
            matches = (
                rule.pattern.finditer(text)
                if lead is None
                else _near_anchors(rule, lead, text, lowered)
            )
            for match in matches:
                group = match.lastindex or 0 if rule.group < 0 else rule.group
                start, end = match.span(group)
                if end > start:
                    found.append((start, end, f"[REDACTED:{rule.name}]"))
        for secret in known:
            start = text.find(secret)
            while start >= 0:
                found.append((start, start + len(secret), "[REDACTED:secret_attribute]"))
                start = text.find(secret, start + len(secret))
        return _merged(found)

    def text(self, text: str, known: Sequence[str] = ()) -> str:
        return _apply(text, self.edits(text, known))

    def value(self, value: Any, key: str = "") -> Any:
        """An attribute value with secrets replaced: strings scanned, lists and maps walked,
        the whole value replaced when `key` names a secret; other values as they are."""
        if key and self._names_secret(key):
            return "[REDACTED:secret_attribute]"
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes | bytearray):
            # Stored as hex, which gives the bytes back: scanned as text, and stored as the
            # redacted text when they hold a secret.
            text = _bytes_text(value)
            edits = self.edits(text)
            return _apply(text, edits) if edits else value
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        if isinstance(value, Mapping):
            return {k: self.value(v, str(k)) for k, v in value.items()}
        return value

    def identifier(self, value: str) -> str:
        """An identifier to store (a conversation id): itself, or when a rule finds a secret
        in it (a session token used as the id), `[REDACTED:<rule>:<digest>]` in its place.
        The digest (SHA-256 of the whole value, 64 bits) is the same wherever the id is
        stored, so turns, spans and queries still join on it; distinct ids stay distinct."""
        edits = self.edits(value)
        if not edits:
            return value
        rule = edits[0][2][len("[REDACTED:") : -1]
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f"[REDACTED:{rule}:{digest}]"

    # --- what is stored -------------------------------------------------------------------

    def span(self, span: SpanRecord) -> SpanRecord:
        """A copy of `span` to store: attributes, events and status message redacted (the
        span itself when there is nothing to redact, the common case)."""
        if self._clean(span):
            return span
        return replace(
            span,
            name=self.text(span.name),
            attributes=self._attributes(span.attributes),
            resource_attributes=self._attributes(span.resource_attributes),
            events=tuple(
                replace(
                    event,
                    name=self.text(event.name),
                    attributes=self._attributes(event.attributes),
                )
                for event in span.events
            )
            if span.events
            else span.events,
            status_message=self.text(span.status_message),
        )

    def verification(self, answer: Verification) -> Verification:
        """A source's answer as stored: the name, the query and the answer redacted (a
        link's query string or a lookup's answer may carry a credential)."""
        subject = replace(answer.subject, name=self.text(answer.subject.name))
        return replace(
            answer, subject=subject, query=self.text(answer.query), answer=self.text(answer.answer)
        )

    def judged(self, turn: Turn, verdict: Verdict) -> tuple[Turn, Verdict]:
        """Copies of a judged turn and its verdict to store. Findings' offsets move with the
        reply; a tool call keeps the outcome judged on its raw result. The turn and
        verdict themselves when there is nothing to redact, the common case."""
        if self._clean_judged(turn, verdict):
            return turn, verdict
        known = self._known_secrets(turn)
        reply_edits = self.edits(turn.reply, known)
        stored_turn = replace(
            turn,
            conversation_id=self.identifier(turn.conversation_id),
            agent=self.text(turn.agent),
            model=self.text(turn.model),
            service=self.text(turn.service),
            user_message=self.text(turn.user_message, known),
            reply=_apply(turn.reply, reply_edits),
            tool_calls=tuple(self._call(call, known) for call in turn.tool_calls),
        )
        shown = _StoredResults(self, turn, stored_turn, known)
        findings = tuple(
            replace(self._finding(f, reply_edits, known), real=shown.kept(f.real))
            for f in verdict.findings
        )
        return stored_turn, replace(verdict, findings=findings)

    def evidence(
        self,
        turn: Turn,
        snapshots: Sequence[Snapshot],
        citations: Sequence[CitationBacking],
        backings: Sequence[Backing] = (),
    ) -> tuple[tuple[Snapshot, ...], tuple[CitationBacking, ...], tuple[Backing, ...]]:
        """Copies of a turn's snapshots, citation backings and identifier backings to
        store: contents, addresses and cited texts redacted, offsets moved to the redacted
        reply (as `judged` moves findings'). A backed identifier is kept only where the
        redacted reply still shows it as it was: a secret is often recognised by its
        context ("api key: …"), which the bare token lacks. A snapshot keeps the hash of
        the raw text: it names what the tool returned, and the same document read again
        maps to it."""
        known = self._known_secrets(turn)
        reply_edits = self.edits(turn.reply, known)
        stored_snapshots = tuple(
            replace(
                s, url_or_path=self.text(s.url_or_path, known), content=self.text(s.content, known)
            )
            for s in snapshots
        )
        stored_citations = tuple(
            replace(
                c,
                cited=self.text(c.cited, known),
                start=_moved(c.start, reply_edits),
                end=_moved(c.end, reply_edits, end=True),
            )
            for c in citations
        )
        stored_reply = _apply(turn.reply, reply_edits)
        moved = (
            replace(
                b,
                start=_moved(b.start, reply_edits),
                end=_moved(b.end, reply_edits, end=True),
                tool=self.text(b.tool),
            )
            for b in backings
        )
        stored_backings = tuple(b for b in moved if stored_reply[b.start : b.end] == b.token)
        return stored_snapshots, stored_citations, stored_backings

    def _known_secrets(self, turn: Turn) -> list[str]:
        # A value the agent passed under a secret's name (`{"password": "two words"}`) is
        # replaced wherever else it shows: a finding that quotes the argument, the reply.
        known: list[str] = []
        for call in turn.tool_calls:
            self._secret_values(call.arguments, known)
        return known

    def _secret_values(self, value: Any, into: list[str], secret: bool = False) -> None:
        """Append the strings of `value` held under a key that names a secret to `into`
        (lists and maps walked; texts shorter than MIN_SECRET_CHARS left out: replacing
        them everywhere would mangle ordinary words)."""
        if isinstance(value, str):
            if secret and len(value) >= MIN_SECRET_CHARS and value not in into:
                into.append(value)
        elif isinstance(value, list | tuple):
            for item in value:
                self._secret_values(item, into, secret)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                self._secret_values(item, into, secret or self._names_secret(str(key)))

    def _clean(self, span: SpanRecord) -> bool:
        """True when no rule and no key would change `span`. Every string of the span is
        scanned once, joined, instead of rule by rule and string by string: a span holds
        a dozen strings, and each pattern call has a fixed cost that would dominate."""
        if not self._all_joinable:
            return False
        strings: list[str] = [span.status_message, span.name, *(e.name for e in span.events)]
        maps = [span.attributes, span.resource_attributes, *(e.attributes for e in span.events)]
        if not all(self._collect(attributes, strings) for attributes in maps):
            return False
        return self._all_clean(strings)

    def _clean_judged(self, turn: Turn, verdict: Verdict) -> bool:
        """True when `judged` would change nothing: every string it redacts, scanned once,
        joined (as `_clean` does for a span)."""
        if not self._all_joinable:
            return False
        strings = [
            turn.reply,
            turn.user_message,
            turn.conversation_id,
            turn.agent,
            turn.model,
            turn.service,
        ]
        for call in turn.tool_calls:
            strings += (call.name, call.arguments_text, call.result or "")
            if not self._collect(call.arguments, strings):
                return False
        for finding in verdict.findings:
            strings += (finding.message, finding.token, *finding.checked_against)
            strings += (finding.checked_note or "",)
            strings += (s for r in finding.real for s in (r.token, r.tool))
        return self._all_clean(strings)

    def _all_clean(self, strings: list[str]) -> bool:
        """True when no rule finds anything in `strings`. Long strings already found clean
        are skipped: system instructions and tool definitions, the largest attributes,
        repeat on every LLM span of an agent."""
        memo = self._clean_memo
        fresh = [s for s in strings if len(s) < _MEMO_MIN_CHARS or s not in memo]
        if self.edits("\0".join(fresh)):
            return False
        with self._clean_memo_lock:
            for text in fresh:
                if _MEMO_MIN_CHARS <= len(text) <= _MEMO_MAX_CHARS:
                    if len(memo) >= _MAX_REMEMBERED_TEXTS:
                        del memo[next(iter(memo))]  # the oldest
                    memo[text] = None
        return True

    def _collect(self, value: Any, into: list[str]) -> bool:
        """Append every string inside an attribute value (lists and maps walked) to `into`;
        False as soon as a map key names a secret."""
        if isinstance(value, str):
            into.append(value)
        elif isinstance(value, bytes | bytearray):
            into.append(_bytes_text(value))
        elif isinstance(value, list | tuple):
            return all(self._collect(item, into) for item in value)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                if self._names_secret(key if type(key) is str else str(key)):
                    return False
                # Text values, nearly all of them, are taken here rather than by a
                # recursive call each: this walk runs on every span before it is stored.
                if type(item) is str:
                    into.append(item)
                elif not self._collect(item, into):
                    return False
        return True

    def _names_secret(self, key: str) -> bool:
        known = self._secret_key_memo.get(key)
        if known is None:
            known = key.rsplit(".", 1)[-1].lower() in self._keys
            if len(self._secret_key_memo) < _MAX_REMEMBERED_KEYS:
                self._secret_key_memo[key] = known
        return known

    def _attributes(self, attributes: Mapping[str, Any]) -> Mapping[str, Any]:
        return {
            key: self.identifier(value)
            if key in _CONVERSATION_KEYS and isinstance(value, str)
            else self.value(value, key)
            for key, value in attributes.items()
        }

    def _call(self, call: ToolCall, known: Sequence[str] = ()) -> ToolCall:
        redacted = replace(
            call,
            name=self.text(call.name),
            arguments=self._attributes(call.arguments),
            arguments_text=self.text(call.arguments_text, known),
            result=None if call.result is None else self.text(call.result, known),
        )
        # The stored `ok` must be the one judged on the raw result: mark a failed call as
        # failed explicitly, so a replaced error text cannot turn it into a success.
        if not call_succeeded(call):
            redacted = replace(redacted, error=True)
        return redacted

    def _finding(
        self, finding: Finding, reply_edits: Sequence[Edit], known: Sequence[str] = ()
    ) -> Finding:
        span = finding.span
        if span is not None and reply_edits:
            span = TextRange(
                _moved(span.start, reply_edits), _moved(span.end, reply_edits, end=True)
            )
        return replace(
            finding,
            message=self.text(finding.message, known),
            token=self.text(finding.token, known),
            checked_against=tuple(self.text(item, known) for item in finding.checked_against),
            checked_note=None
            if finding.checked_note is None
            else self.text(finding.checked_note, known),
            span=span,
        )


class _StoredResults:
    """The tool results of a turn as stored (redacted), read for a finding's real tokens:
    a token is kept only where its call's stored result still shows it, since a secret is
    often recognised by its context ("api key: …"), which the bare token lacks. Results of
    earlier turns are redacted when first asked for."""

    def __init__(self, redactor: Redactor, raw: Turn, stored: Turn, known: Sequence[str]):
        self._redactor = redactor
        self._known = known
        self._calls = {
            (c.name, c.call_id): s.result or ""
            for c, s in zip(raw.tool_calls, stored.tool_calls, strict=True)
        }
        self._history = {(c.name, c.call_id): c.result or "" for c in raw.history_tool_calls}

    def kept(self, real: Sequence[ResultToken]) -> tuple[ResultToken, ...]:
        return tuple(
            replace(r, tool=self._redactor.text(r.tool)) for r in real if r.token in self._of(r)
        )

    def _of(self, real: ResultToken) -> str:
        key = (real.tool, real.call_id)
        if key not in self._calls:
            raw = self._history.get(key, "")
            self._calls[key] = self._redactor.text(raw, self._known) if raw else ""
        return self._calls[key]


_PICKLED = frozenset({"_rules", "_all_joinable", "_keys"})
_MAX_REMEMBERED_KEYS = 10_000
_MEMO_MIN_CHARS = 256
"""Shorter texts are scanned each time: looking them up would cost about as much."""
_MEMO_MAX_CHARS = 32_768
_MAX_REMEMBERED_TEXTS = 1_000
"""With `_MEMO_MAX_CHARS`, the memo holds at most 32 M characters (usually far fewer:
texts worth remembering are system instructions and tool definitions)."""


_CONVERSATION_KEYS = frozenset(CONVERSATION_KEYS)
"""Attributes holding the conversation id: stored as `Redactor.identifier` gives it, the
value the stored turn carries, so a turn rebuilt from stored spans joins the same."""


class _Prefilter:
    """The rules that can match a text, found in one compiled pass over its lower-cased
    form: an RE2 set of every rule's anchors, or when it has none its literals in lower
    case. An anchor is found exactly when `anchor in text.lower()` holds, so a rule runs
    on the texts its anchors allow, as without the set; a literal in the text is in its
    lower-cased form too, so no text a pattern could match is skipped. A rule with
    neither always runs. Rules keep their order (the first of equal edits wins)."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self._rules = tuple(rules)
        self._always = tuple(rule for rule in rules if not _needles(rule))
        self._always_run = frozenset(i for i, rule in enumerate(rules) if not _needles(rule))
        self._owners: list[int] = []
        options = re2.Options()
        options.literal = True
        # Bytes are matched as bytes: a lone surrogate (encoded with surrogatepass) is no
        # valid UTF-8, and the needles are ASCII, which no multi-byte character contains.
        options.encoding = re2.Options.Encoding.LATIN1
        self._set: Any = re2.Set.SearchSet(options)
        for index, rule in enumerate(rules):
            for needle in _needles(rule):
                self._set.Add(needle.encode("utf-8", "surrogatepass"))
                self._owners.append(index)
        if self._owners:
            self._set.Compile()

    def rules_for(self, text: str) -> tuple[Rule, ...]:
        """The rules to run on `text`, in their order."""
        if not self._owners:
            return self._always
        hits = self._set.Match(text.lower().encode("utf-8", "surrogatepass"))
        if not hits:
            return self._always
        run = self._always_run.union(self._owners[hit] for hit in hits)
        return tuple(rule for index, rule in enumerate(self._rules) if index in run)


def _needles(rule: Rule) -> tuple[str, ...]:
    """What `_Prefilter` looks for on a rule's behalf, in lower case."""
    return rule.anchors or tuple(literal.lower() for literal in rule.literals)


_FOLDS_TO_ASCII = re.compile("[\u0130\u0131\u017f\u212a]")
"""The characters a case-insensitive pattern matches to an ASCII letter (İ, ı, ſ, the
Kelvin sign) but whose lower case is no ASCII letter: an anchor is not found where they
spell it. (İ is also the one character whose lower case is two characters long.)"""


def _anchors_are_exact(text: str) -> bool:
    """True when `text.lower()` finds an anchor wherever a case-insensitive pattern sees
    its word, at the same offsets."""
    return text.isascii() or not _FOLDS_TO_ASCII.search(text)


def _near_anchors(rule: Rule, lead: int, text: str, lowered: str) -> Iterator[re.Match[str]]:
    """What `rule.pattern.finditer(text)` gives, found by trying the pattern only at the
    `lead` (`rule.lead`) starts before each anchor in `lowered` (`text.lower()`, the text
    passing `_anchors_are_exact`). When the tries would outnumber the text's characters,
    the whole text is searched instead."""
    found_at: list[int] = []
    for anchor in rule.anchors:
        at = lowered.find(anchor)
        while at >= 0:
            found_at.append(at)
            at = lowered.find(anchor, at + 1)
    if len(found_at) * (lead + 1) > len(text):
        yield from rule.pattern.finditer(text)
        return
    found_at.sort()
    match_at = rule.pattern.match
    resume = 0  # matches do not overlap: the next one starts where the last ended
    for at in found_at:
        start = max(resume, at - lead)
        while start <= at:
            found = match_at(text, start)
            if found is None:
                start += 1
                continue
            yield found
            # A pattern with a lead matches its word at least: never the empty string.
            resume = start = max(found.end(), start + 1)


def _bytes_text(value: bytes | bytearray) -> str:
    """Bytes as text for scanning: UTF-8, undecodable bytes as U+FFFD (a secret is ASCII)."""
    return bytes(value).decode("utf-8", "replace")


def _merged(found: list[Edit]) -> list[Edit]:
    """`found` in order, an edit starting inside an earlier (longer) one left out."""
    if not found:
        return []
    found.sort(key=lambda edit: (edit[0], -edit[1]))
    kept: list[Edit] = []
    for edit in found:
        if kept and edit[0] < kept[-1][1]:
            continue  # inside a secret already replaced
        kept.append(edit)
    return kept


def _apply(text: str, edits: Sequence[Edit]) -> str:
    if not edits:
        return text
    parts: list[str] = []
    position = 0
    for start, end, replacement in edits:
        parts.append(text[position:start])
        parts.append(replacement)
        position = end
    parts.append(text[position:])
    return "".join(parts)


def _moved(position: int, edits: Sequence[Edit], *, end: bool = False) -> int:
    """Where `position` of the raw text lands in the redacted text. A position inside a
    replaced secret moves to the replacement's start, or its end for an `end` offset."""
    shift = 0
    for start, stop, replacement in edits:
        if position <= start:
            break
        if position < stop:
            return start + shift + (len(replacement) if end else 0)
        shift += len(replacement) - (stop - start)
    return position + shift


def _from_section(section: Mapping[str, Any], source: str) -> Redactor | None:
    known = {"enabled", "emails", "phones", "disable", "keys", "patterns"}
    unknown = set(section) - known
    if unknown:
        raise ConfigError(f"{source}: unknown [redaction] keys {sorted(unknown)}")
    if not _bool(section, "enabled", True, source):
        return None
    disabled = _strings(section, "disable", source)
    names = {rule.name for rule in SECRET_RULES}
    if not set(disabled) <= names:
        raise ConfigError(
            f"{source}: disable names unknown rules {sorted(set(disabled) - names)};"
            f" built-in: {sorted(names)}"
        )
    rules = [rule for rule in SECRET_RULES if rule.name not in disabled]
    rules += [r for option, r in OPTIONAL_RULES.items() if _bool(section, option, False, source)]
    patterns = section.get("patterns", [])
    if not isinstance(patterns, list):
        raise ConfigError(f"{source}: [[redaction.patterns]] must be tables")
    rules += [_custom(entry, source) for entry in patterns]
    keys = (*SECRET_KEY_ENDINGS, *_strings(section, "keys", source))
    return Redactor(rules, keys)


def _custom(entry: object, source: str) -> Rule:
    if not isinstance(entry, dict) or not isinstance(entry.get("pattern"), str):
        raise ConfigError(f"{source}: each [[redaction.patterns]] needs a pattern string")
    name = entry.get("name", "custom")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9_]{1,40}", name):
        raise ConfigError(f"{source}: pattern name {name!r}: 1-40 of a-z, 0-9, _")
    try:
        pattern = re.compile(entry["pattern"])
    except re.error as exc:
        raise ConfigError(f"{source}: pattern {name}: {exc}") from None
    group = entry.get("group", 0)
    if not isinstance(group, int) or not 0 <= group <= pattern.groups:
        raise ConfigError(f"{source}: pattern {name}: group must be 0..{pattern.groups}")
    if pattern.fullmatch(""):
        raise ConfigError(f"{source}: pattern {name} matches empty text")
    return Rule(name, pattern, (), group, joinable=False)


def _bool(section: Mapping[str, Any], key: str, default: bool, source: str) -> bool:
    value = section.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{source}: [redaction] {key} must be true or false")
    return value


def _strings(section: Mapping[str, Any], key: str, source: str) -> list[str]:
    value = section.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: [redaction] {key} must be a list of strings")
    return list(value)
