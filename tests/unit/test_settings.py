"""ValidationSettings: from_toml / from_mapping and the ConfigError messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from factledger.processors.errors import ConfigError, FactLedgerError
from factledger.processors.kinds import Kind, Severity
from factledger.processors.settings import ValidationSettings


def write(tmp_path: Path, text: str, name: str = "settings.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_full_settings_file_is_read(tmp_path):
    path = write(
        tmp_path,
        """
[validation]
disabled_validators = ["confabulation", "stall"]
disabled_kinds = ["stall"]
claim_rules = "rules/mine.toml"

[validation.severity]
ungrounded_tool_argument = "info"
fabricated_identifier = "flag"
""",
    )
    settings = ValidationSettings.from_toml(path)
    assert settings.disabled_validators == frozenset({"confabulation", "stall"})
    assert settings.disabled_kinds == frozenset({Kind.STALL})
    assert dict(settings.severity) == {
        Kind.UNGROUNDED_TOOL_ARGUMENT: Severity.INFO,
        Kind.FABRICATED_IDENTIFIER: Severity.FLAG,
    }
    assert settings.claim_rules_path == tmp_path / "rules" / "mine.toml"


@pytest.mark.parametrize(
    "text",
    ["", "[other]\nx = 1\n", "[validation]\n"],
    ids=["empty-file", "no-validation-section", "empty-validation-section"],
)
def test_missing_settings_give_defaults(tmp_path, text):
    assert ValidationSettings.from_toml(write(tmp_path, text)) == ValidationSettings()


def test_absolute_claim_rules_path_is_kept(tmp_path):
    target = tmp_path / "elsewhere" / "rules.toml"
    path = write(tmp_path, f'[validation]\nclaim_rules = "{target.as_posix()}"\n')
    assert ValidationSettings.from_toml(path).claim_rules_path == target


def test_relative_claim_rules_without_source_stay_relative():
    settings = ValidationSettings.from_mapping({"claim_rules": "r.toml"})
    assert settings.claim_rules_path == Path("r.toml")


@pytest.mark.parametrize(
    ("section", "needles"),
    [
        ({"disabled_kind": ["stall"]}, ["unknown keys", "disabled_kind"]),
        ({"disabled_kinds": ["halucination"]}, ["unknown finding kind", "halucination"]),
        ({"disabled_kinds": "stall"}, ["disabled_kinds", "list of strings"]),
        ({"disabled_kinds": ["stall", 3]}, ["disabled_kinds", "list of strings"]),
        ({"disabled_validators": "stall"}, ["disabled_validators", "list of strings"]),
        ({"severity": {"stall": "warn"}}, ["severity.stall", "reject, flag or info", "warn"]),
        ({"severity": {"stal": "info"}}, ["unknown finding kind", "stal"]),
        ({"claim_rules": 3}, ["claim_rules", "path string"]),
    ],
    ids=[
        "unknown-key",
        "unknown-kind-in-disabled_kinds",
        "disabled_kinds-not-a-list",
        "disabled_kinds-non-string-item",
        "disabled_validators-not-a-list",
        "bad-severity-value",
        "unknown-kind-in-severity",
        "claim_rules-not-a-string",
    ],
)
def test_bad_settings_raise_config_error_naming_the_key(tmp_path, section, needles):
    with pytest.raises(ConfigError) as info:
        ValidationSettings.from_mapping(section, source=tmp_path / "s.toml")
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 's.toml'}: [validation]")
    for needle in needles:
        assert needle in message


def test_mapping_errors_without_source_say_settings():
    with pytest.raises(ConfigError, match=r"^<settings>: \[validation\] has unknown keys"):
        ValidationSettings.from_mapping({"nope": 1})


@pytest.mark.parametrize("value", ['"info"', "3", '["info"]'], ids=["string", "int", "list"])
def test_severity_that_is_not_a_table_is_a_config_error(tmp_path, value):
    path = write(tmp_path, f"[validation]\nseverity = {value}\n")
    with pytest.raises(ConfigError, match="severity"):
        ValidationSettings.from_toml(path)


@pytest.mark.parametrize("value", ["3", '"x"', "[1]"], ids=["int", "string", "list"])
def test_validation_that_is_not_a_table_is_a_config_error(tmp_path, value):
    path = write(tmp_path, f"validation = {value}\n")
    with pytest.raises(ConfigError, match=r"\[validation\] must be a table"):
        ValidationSettings.from_toml(path)


@pytest.mark.parametrize("section", [3, "ab", None], ids=["int", "string", "none"])
def test_from_mapping_rejects_a_non_mapping(section):
    with pytest.raises(ConfigError, match=r"must be a table"):
        ValidationSettings.from_mapping(section)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[validation\n", "settings.toml"),
        ('[validation]\ndisabled_kinds = ["nope"]\n', "'nope'"),
        ("[validation.severity]\nstall = 'loud'\n", "severity.stall"),
    ],
    ids=["toml-syntax-error", "unknown-kind", "bad-severity"],
)
def test_bad_settings_file_names_the_file(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        ValidationSettings.from_toml(path)
    assert str(path) in str(info.value)
    assert needle in str(info.value)


def test_missing_settings_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"missing\.toml"):
        ValidationSettings.from_toml(tmp_path / "missing.toml")


def test_config_error_is_a_factledger_error():
    error: Any = ConfigError("x")
    assert isinstance(error, FactLedgerError)
    assert isinstance(error, ValueError)
