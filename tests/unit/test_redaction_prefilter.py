"""The one-pass prefilter of the secret check changes nothing that is found: every text
gets the edits that running each rule whose anchors it holds would give."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factledger.collector.redaction import (
    MIN_SCAN_CHARS,
    OPTIONAL_RULES,
    SECRET_RULES,
    Edit,
    Redactor,
    Rule,
    _merged,
)
from tests.unit.secret_corpus import SHAPES

RULES = (*SECRET_RULES, *OPTIONAL_RULES.values())
ALL = Redactor(RULES)


def _rule_by_rule(rules: tuple[Rule, ...], text: str) -> list[Edit]:
    """The edits as found without the prefilter: every rule whose anchors the lower-cased
    text holds (or that has none) runs on the text."""
    if len(text) < MIN_SCAN_CHARS:
        return []
    lowered = text.lower()
    found: list[Edit] = []
    for rule in rules:
        if rule.anchors and not any(anchor in lowered for anchor in rule.anchors):
            continue
        for match in rule.pattern.finditer(text):
            group = match.lastindex or 0 if rule.group < 0 else rule.group
            start, end = match.span(group)
            if end > start:
                found.append((start, end, f"[REDACTED:{rule.name}]"))
    return _merged(found)


def _starts_with_literal(pattern: str, literal: str) -> bool:
    """True when every match of `pattern` starts with `literal`: the pattern opens with its
    characters (escaped or plain, none of them special), no quantifier after the last."""
    at = 0
    for char in literal:
        if pattern.startswith("\\" + char, at):
            at += 2
        elif pattern.startswith(char, at) and char not in _SPECIAL:
            at += 1
        else:
            return False
    return not pattern.startswith(("*", "+", "?", "{"), at)


_SPECIAL = frozenset(".^$*+?{}[]|()\\")


def test_every_rule_the_prefilter_may_skip_starts_with_its_literal() -> None:
    for rule in RULES:
        if rule.anchors:
            continue
        if not rule.literals:
            assert rule.name == "phone", f"{rule.name} has no anchor or literal: it always runs"
            continue
        for literal in rule.literals:
            assert _starts_with_literal(rule.pattern.pattern, literal), (rule.name, literal)
    assert not _starts_with_literal(r"sk-?ant", "sk-")
    assert not _starts_with_literal(r"hooks.slack", "hooks.slack")


_SAMPLES = [
    "key sk-proj-abcDEF1234567890abcdef1234 ok",
    "SK-PROJ-abcDEF1234567890abcdef1234 upper-case prefixes are no key",
    "Authorization: Bearer abc.def_ghi-jkl~mno123",
    "AUTHORIZATION: BASIC dXNlcjpwYXNzd29yZA==",
    "postgres://admin:hunter2secret@db:5432/app",
    '{"password": "correct horse"}',
    "DB_PASSWORD=hunter22x AWS_SECRET_ACCESS_KEY=abcdefghijklmnopqrstuvwxyz0123456789ABCD",
    "AKIAIOSFODNN7EXAMPLE\0ASIAIOSFODNN7EXAMPLE\0akiaiosfodnn7example",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- tail",
    "https://hooks.slack.com/services/T000/B000/XXXX and HTTPS://HOOKS.SLACK.COM/services/x",
    "eyJhbGciOiJI.eyJzdWIiOiIx.dozjgNryP4J3",
    "mail ana@example.co.uk or call +49 30 1234567, (415) 555-0100",
    # Characters whose lower case is ASCII, or that only a case-insensitive pattern folds:
    # the rule runs exactly where `anchor in text.lower()` says, as before.
    "toKen=abcdefgh12 (a Kelvin sign) and paſsword=abcdefgh12 (a long s)",
    "İ Bearer abcdefghijklmnopqrstuvwx and api_KEY = 'abcdefgh'",
    "a lone surrogate \ud800 beside token=abcdefgh1234 and sk-ant-abcdefghijklmnopqrstuvwxyz",
    "Order #W0001234 has shipped, refund RF-2024-0042 issued.",
    "the token count was 1200; pass the salt; keyboard",
]


@pytest.mark.parametrize("text", _SAMPLES)
def test_known_shapes_get_the_edits_rule_by_rule_gives(text: str) -> None:
    assert ALL.edits(text) == _rule_by_rule(RULES, text)
    assert Redactor.default().edits(text) == _rule_by_rule(SECRET_RULES, text)


_FRAGMENTS = [
    "sk-",
    "ant-",
    "proj-",
    "AKIA",
    "akia",
    "gh",
    "p_",
    "github_pat_",
    "glpat-",
    "xox",
    "b-",
    "AIza",
    "sk_",
    "rk_",
    "live_",
    "hf_",
    "npm_",
    "eyJ",
    ".",
    "://",
    "@",
    ":",
    "=",
    ": ",
    '"',
    "'",
    "\\n",
    "\\",
    " ",
    "\n",
    "\0",
    "Bearer ",
    "Basic ",
    "Authorization",
    "Cookie",
    "private-token",
    "secret_access_key",
    "AccountKey",
    "password",
    "PASS",
    "pwd",
    "token",
    "Key",
    "_TOKEN",
    "_SECRET",
    "DB",
    "-----BEGIN ",
    "PRIVATE KEY-----",
    "-----END ",
    "https://hooks.slack.com/",
    "services/",
    "abcdefghijklmnop",
    "ABCDEFGHIJKLMNOP",
    "0123456789",
    "+49 30 ",
    "(415) 555-0100",
    "client_secret",
    "encryption_key",
    "signing-key",
    "private_key",
    "SECRET_KEY_BASE",
    "apikey",
    "passphrase",
    "session_token",
    "--user",
    "-u ",
    "--client-secret=",
    "mysql -p",
    "login ",
    ":5432:",
    '"auth',
    "?sig=",
    "Q~",
    "1234567:AA",
    "K",
    "ſ",
    "İ",
    "é",
    "\ud800",
]


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(_FRAGMENTS), max_size=40))
def test_any_text_gets_the_edits_rule_by_rule_gives(parts: list[str]) -> None:
    text = "".join(parts)
    assert ALL.edits(text) == _rule_by_rule(RULES, text)


def test_a_long_text_of_near_misses_still_lists_every_rule_it_holds() -> None:
    # RE2 reports no match at all when its automaton runs out of memory: two megabytes
    # of every word and literal cut at every length walk through all of its states.
    redactor = Redactor.default()
    needles = [word for rule in SECRET_RULES for word in rule.anchors or rule.literals]
    pieces = needles + [word[:cut] for word in needles for cut in range(1, len(word))]
    text = "".join(pieces[(i * 7919) % len(pieces)] for i in range(400_000)) + " é \ud800"
    assert len(text) > 2_000_000
    assert redactor._prefilter.rules_for(text) == SECRET_RULES


_LEADED = [rule for rule in RULES if rule.lead is not None]
_ASCII = st.characters(codec="ascii")


@pytest.mark.parametrize("rule", _LEADED, ids=lambda rule: rule.name)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_rule_tried_only_near_its_anchors_finds_what_it_finds_anywhere(
    rule: Rule, data: st.DataObject
) -> None:
    # Texts the pattern itself makes (any case, any escape depth), between other text and
    # repeated: a lead too short for one of its words leaves that match out.
    found = data.draw(st.from_regex(rule.pattern, alphabet=_ASCII))
    around = data.draw(st.lists(st.sampled_from(_FRAGMENTS), max_size=6))
    text = "".join(around[: len(around) // 2]) + found + " " + found + "".join(around)
    assert Redactor([rule]).edits(text) == _rule_by_rule((rule,), text)


def test_the_corpus_of_real_shapes_gets_the_edits_rule_by_rule_gives() -> None:
    redactor = Redactor.default()
    for shape in SHAPES:
        for text in (shape.text, shape.negative, json.dumps({"out": shape.text})):
            assert redactor.edits(text) == _rule_by_rule(SECRET_RULES, text), shape.name
