"""claim_rules: load_claim_rules and the shipped claim_rules.toml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from factledger.processors.claim_rules import (
    DEFAULT_RULES_PATH,
    ClaimRule,
    alternation,
    load_claim_rules,
)
from factledger.processors.errors import ConfigError

GOOD_RULE = """
[[rule]]
capability = "push"
en = ["Pushed"]
de = ["Gepusht"]
zh = ["已推送"]
patterns = ['\\bshipped it\\b']
tools = ["Push", "git"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_rules_load_and_are_well_formed():
    rules = load_claim_rules()
    assert load_claim_rules(DEFAULT_RULES_PATH) == rules
    capabilities = [r.capability for r in rules.rules]
    assert len(capabilities) == len(set(capabilities))
    assert {"push", "commit", "deploy", "delete", "send"} <= set(capabilities)
    for rule in rules.rules:
        assert rule.tools or rule.any_tool
        assert all(w == w.lower() for w in (*rule.en, *rule.de, *rule.tools))
        for pattern in rule.patterns:
            re.compile(pattern)


def test_custom_rules_are_read_and_lower_cased(tmp_path):
    rules = load_claim_rules(write(tmp_path, GOOD_RULE))
    rule = rules.by_capability("push")
    assert rule == ClaimRule(
        capability="push",
        en=("pushed",),
        de=("gepusht",),
        zh=("已推送",),
        patterns=("\\bshipped it\\b",),
        tools=("push", "git"),
    )
    with pytest.raises(KeyError):
        rules.by_capability("deploy")


@pytest.mark.parametrize(
    ("rule", "tool", "backed"),
    [
        (ClaimRule("push", tools=("push",)), "gh_PUSH_branch", True),
        (ClaimRule("push", tools=("push",)), "gh_list_commits", False),
        (ClaimRule("any", any_tool=True), "anything", True),
    ],
    ids=["tool-name-contains-keyword-case-insensitive", "unrelated-tool", "any_tool"],
)
def test_backed_by(rule, tool, backed):
    assert rule.backed_by(tool) is backed


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (
            GOOD_RULE.replace("'\\bshipped it\\b'", "'(unclosed'"),
            ["rule[0]", "(unclosed", "invalid"],
        ),
        (GOOD_RULE + 'verbs = ["x"]\n', ["rule[0]", "unknown keys", "verbs"]),
        (GOOD_RULE.replace('capability = "push"', ""), ["rule[0]", "capability"]),
        (GOOD_RULE.replace('en = ["Pushed"]', 'en = "pushed"'), ["rule[0].en", "list"]),
        (GOOD_RULE.replace('en = ["Pushed"]', 'en = [""]'), ["rule[0].en", "non-empty"]),
        (GOOD_RULE.replace('tools = ["Push", "git"]', ""), ["rule[0]", "(push)", "no tools"]),
        (GOOD_RULE + "any_tool = 1\n", ["rule[0].any_tool", "true or false"]),
        (GOOD_RULE + GOOD_RULE.replace("Pushed", "x") + "bogus = 1\n", ["rule[1]", "bogus"]),
        ("# nothing here\n", ["no [[rule]] tables"]),
        ("rule = []\n", ["no [[rule]] tables"]),
        ("rule = [1]\n", ["rule[0]", "not a table"]),
        ("[[rule]\n", ["claim rules"]),
    ],
    ids=[
        "bad-regex",
        "unknown-key",
        "missing-capability",
        "words-not-a-list",
        "empty-word",
        "no-tools-and-not-any_tool",
        "any_tool-not-bool",
        "error-in-second-rule-names-it",
        "no-rules",
        "empty-rule-list",
        "rule-not-a-table",
        "toml-syntax-error",
    ],
)
def test_bad_rules_file_raises_config_error(tmp_path, text, needles):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_claim_rules(path)
    message = str(info.value)
    assert str(path) in message
    for needle in needles:
        assert needle in message


def test_missing_rules_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.toml"):
        load_claim_rules(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("words", "text", "match"),
    [
        (["push", "pushed"], "we pushed it", "pushed"),
        (["a.b", "a"], "xa.by", "a.b"),
        (["c++", "c"], "c++", "c++"),
    ],
    ids=["longest-first", "dots-escaped", "plus-escaped"],
)
def test_alternation(words, text, match):
    found = re.search(alternation(words), text)
    assert found is not None
    assert found.group() == match
