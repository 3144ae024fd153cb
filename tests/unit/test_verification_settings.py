"""The [verification] section: sources in the order they are asked, bad values named."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.processors.errors import ConfigError
from factledger.verifiers.settings import VerificationSettings


def test_by_default_the_trace_alone_is_asked() -> None:
    settings = VerificationSettings.from_mapping({})
    assert settings.sources == ("trace",)
    assert [v.name for v in settings.verifiers()] == ["trace"]


def test_every_source_in_the_order_they_are_asked(tmp_path: Path) -> None:
    settings = VerificationSettings.from_mapping(
        {
            "git": {"repositories": {"acme/site": str(tmp_path)}},
            "links": {"allow_hosts": ["docs.example.com"]},
            "workspace": {"root": str(tmp_path)},
            "plugins": [
                {
                    "name": "tickets",
                    "path": "factledger.verifiers.json_lookup:JsonLookupVerifier",
                    "options": {"url": "https://tickets.example.com/t/{name}"},
                }
            ],
        }
    )
    assert settings.sources == ("trace", "workspace", "git", "plugin:tickets", "link")


def test_switched_off_nothing_is_asked() -> None:
    assert VerificationSettings.from_mapping({"enabled": False}).verifiers() == []


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ({"threads": 0}, "verification.threads"),
        ({"threads": "2"}, "verification.threads"),
        ({"budget_seconds": -1}, "verification.budget_seconds"),
        ({"retry_seconds": [5, "x"]}, "verification.retry_seconds"),
        ({"enabled": "yes"}, "verification.enabled"),
        ({"sources": []}, "verification.sources"),
        ({"git": {"repos": {}}}, "verification.git"),
        ({"git": "acme"}, "verification.git"),
        ({"links": {"max_redirects": "many"}}, "verification.links"),
        ({"workspace": {"root": "/no/such/dir"}}, "verification.workspace"),
        ({"plugins": [{"path": "no_such_module:check"}]}, "verification.plugins[0]"),
        ({"plugins": [{"path": "x:y", "color": 1}]}, "verification.plugins[0].color"),
        ({"plugins": {"path": "x:y"}}, "verification.plugins"),
    ],
)
def test_a_bad_value_names_its_key(section: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace("[", r"\[").replace("]", r"\]")):
        VerificationSettings.from_mapping(section)


def test_the_file_names_itself_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("[validation]\n\n[verification]\nmax_queue = 0\n")
    with pytest.raises(ConfigError, match=r"settings.toml: verification.max_queue"):
        VerificationSettings.from_toml(path)
