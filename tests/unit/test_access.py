"""Tokens and tenants: loading from file and environment, lookups, scopes, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.collector.access import (
    DEFAULT_TENANT,
    AccessConfig,
    ReadScope,
    exposure_warning,
)
from factledger.collector.settings import ServiceSettings
from factledger.processors.errors import ConfigError

ACME_IN = "acme-ingest-token-0001"
GLOBEX_IN = "globex-ingest-token-02"
ACME_READ = "acme-read-token-000003"
OPS_READ = "operations-read-token-4"

TOKENS_FILE = f"""
[ingest]
"{ACME_IN}" = "acme"

[read]
"{ACME_READ}" = ["acme"]
"{OPS_READ}" = ["*"]
"""


def _config(tmp_path: Path) -> AccessConfig:
    path = tmp_path / "tokens.toml"
    path.write_text(TOKENS_FILE, encoding="utf-8")
    return AccessConfig.load(file=path, ingest_env=f"globex:{GLOBEX_IN}")


@pytest.mark.parametrize(
    ("header", "tenant"),
    [
        (f"Bearer {ACME_IN}", "acme"),
        (f"bearer   {GLOBEX_IN}  ", "globex"),
        (f"Bearer {ACME_IN}x", None),
        (f"Bearer {ACME_IN[:-1]}", None),
        (f"Basic {ACME_IN}", None),
        ("", None),
        ("Bearer ", None),
        (f"Bearer {ACME_READ}", None),
    ],
    ids=[
        "file-token",
        "environment-token-any-case-scheme",
        "longer-token-refused",
        "prefix-refused",
        "other-scheme-refused",
        "no-header-refused",
        "empty-token-refused",
        "read-token-cannot-ingest",
    ],
)
def test_ingest_token_picks_the_tenant(tmp_path: Path, header: str, tenant: str | None) -> None:
    assert _config(tmp_path).ingest_tenant(header) == tenant


def test_without_ingest_tokens_everything_goes_to_the_default_tenant() -> None:
    config = AccessConfig.load()
    assert config.ingest_tenant("") == DEFAULT_TENANT
    assert config.ingest_tenant("Bearer whatever") == DEFAULT_TENANT
    assert config.tenants == {DEFAULT_TENANT}
    assert not config.read_required


def test_single_ingest_token_is_the_default_tenant() -> None:
    config = AccessConfig.load(single_ingest_token="only-one-token-000000")
    assert config.ingest_tenant("Bearer only-one-token-000000") == DEFAULT_TENANT
    assert config.ingest_tenant("") is None


@pytest.mark.parametrize(
    ("header", "scope"),
    [
        (f"Bearer {ACME_READ}", ReadScope(frozenset({"acme"}))),
        (f"Bearer {OPS_READ}", ReadScope(frozenset(), every=True)),
        (f"Bearer {ACME_IN}", None),
        ("", None),
    ],
    ids=["tenant-token", "operator-token", "ingest-token-cannot-read", "no-token"],
)
def test_read_scopes(tmp_path: Path, header: str, scope: ReadScope | None) -> None:
    assert _config(tmp_path).read_scope(header) == scope


def test_configured_tenants_and_default_tenants(tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert config.tenants == {"acme", "globex"}
    acme = ReadScope(frozenset({"acme", "globex"}))
    assert (acme.default_tenant, acme.allows("globex"), acme.allows("initech")) == (
        "acme",
        True,
        False,
    )
    assert ReadScope(frozenset(), every=True).default_tenant == DEFAULT_TENANT


def test_one_read_token_may_cover_several_tenants() -> None:
    config = AccessConfig.load(read_env=f"acme:{ACME_READ},globex:{ACME_READ}")
    assert config.read_scope(f"Bearer {ACME_READ}") == ReadScope(frozenset({"acme", "globex"}))


@pytest.mark.parametrize(
    ("ingest_env", "read_env", "file_text", "message"),
    [
        ("acme:short", "", None, "at least 16"),
        ("no-colon-here-at-all-000", "", None, "tenant:token"),
        ("bad tenant:long-enough-token-0001", "", None, "must be 1-64 letters"),
        ("*:long-enough-token-00001", "", None, "must be 1-64 letters"),
        (f"acme:{ACME_IN},globex:{ACME_IN}", "", None, "two tenants"),
        ("", "acme:token with spaces inside", None, "visible ASCII"),
        ("", "", "[ingest]\nx = [", "is not valid TOML"),
        ("", "", "[writers]\n", "unknown sections"),
        ("", "", '[ingest]\n"long-enough-token-00001" = 3\n', "tenant names"),
        ("", "", '[read]\n"long-enough-token-00001" = [3]\n', "lists of tenant names"),
    ],
    ids=[
        "short-token",
        "missing-separator",
        "bad-tenant-name",
        "star-is-no-ingest-tenant",
        "one-token-two-tenants",
        "token-with-spaces",
        "broken-toml",
        "unknown-section",
        "ingest-value-not-a-string",
        "read-value-not-names",
    ],
)
def test_bad_configuration_fails_at_start(
    tmp_path: Path, ingest_env: str, read_env: str, file_text: str | None, message: str
) -> None:
    path = None
    if file_text is not None:
        path = tmp_path / "tokens.toml"
        path.write_text(file_text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        AccessConfig.load(file=path, ingest_env=ingest_env, read_env=read_env)


def test_missing_token_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the token file"):
        AccessConfig.load(file=tmp_path / "absent.toml")


def test_service_settings_read_the_token_variables(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(TOKENS_FILE, encoding="utf-8")
    env = {
        "FACTLEDGER_TOKENS_FILE": str(path),
        "FACTLEDGER_INGEST_TOKENS": f"globex:{GLOBEX_IN}",
        "FACTLEDGER_READ_TOKENS": f"globex:{ACME_READ}",
    }
    access = ServiceSettings.from_env(env).access
    assert access.ingest_tenant(f"Bearer {GLOBEX_IN}") == "globex"
    assert access.read_scope(f"Bearer {ACME_READ}") == ReadScope(frozenset({"acme", "globex"}))
    with pytest.raises(ConfigError, match="FACTLEDGER_READ_TOKENS"):
        ServiceSettings.from_env({"FACTLEDGER_READ_TOKENS": "acme"})


BOTH_WAYS_OUT = r"FACTLEDGER_READ_TOKENS.*FACTLEDGER_API_OPEN=1"


@pytest.mark.parametrize(
    ("env", "refusal"),
    [
        ({}, None),
        ({"FACTLEDGER_INGEST_TOKEN": ACME_IN}, BOTH_WAYS_OUT),
        ({"FACTLEDGER_INGEST_TOKENS": f"acme:{ACME_IN}"}, BOTH_WAYS_OUT),
        ({"FACTLEDGER_INGEST_TOKEN": ACME_IN, "FACTLEDGER_API_OPEN": "1"}, None),
        ({"FACTLEDGER_API_OPEN": "0"}, BOTH_WAYS_OUT),
        ({"FACTLEDGER_API_OPEN": "1"}, None),
        ({"FACTLEDGER_INGEST_TOKEN": ACME_IN, "FACTLEDGER_READ_TOKENS": f"*:{OPS_READ}"}, None),
        ({"FACTLEDGER_READ_TOKENS": f"*:{OPS_READ}", "FACTLEDGER_API_OPEN": "0"}, None),
        ({"FACTLEDGER_READ_TOKENS": f"*:{OPS_READ}", "FACTLEDGER_API_OPEN": "1"}, "contradicts"),
        ({"FACTLEDGER_API_OPEN": "maybe"}, "FACTLEDGER_API_OPEN must be true or false"),
    ],
    ids=[
        "no-tokens-open-as-before",
        "ingest-token-without-read-tokens-refused",
        "ingest-tokens-without-read-tokens-refused",
        "ingest-token-with-explicitly-open-api",
        "closed-api-without-read-tokens-refused",
        "explicitly-open-api",
        "ingest-and-read-tokens",
        "closed-api-with-read-tokens",
        "open-api-with-read-tokens-contradicts",
        "api-open-not-a-flag",
    ],
)
def test_query_api_is_never_left_open_by_accident(env: dict[str, str], refusal: str | None) -> None:
    if refusal is None:
        settings = ServiceSettings.from_env(env)
        scope = settings.access.read_scope("")
        assert (scope is not None) == (not settings.access.read_required)
    else:
        with pytest.raises(ConfigError, match=refusal):
            ServiceSettings.from_env(env)


def test_token_file_read_table_counts_as_read_tokens(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(TOKENS_FILE, encoding="utf-8")
    settings = ServiceSettings.from_env({"FACTLEDGER_TOKENS_FILE": str(path)})
    assert settings.access.read_scope("") is None


@pytest.mark.parametrize(
    ("host", "read_env", "warned"),
    [
        ("127.0.0.1", "", False),
        ("127.0.0.2", "", False),
        ("localhost", "", False),
        ("::1", "", False),
        ("0.0.0.0", "", True),
        ("::", "", True),
        ("192.0.2.10", "", True),
        ("factledger.internal", "", True),
        ("0.0.0.0", f"*:{OPS_READ}", False),
    ],
    ids=[
        "loopback",
        "loopback-network",
        "localhost",
        "ipv6-loopback",
        "all-interfaces-open",
        "all-ipv6-interfaces-open",
        "one-address-open",
        "host-name-open",
        "all-interfaces-with-read-tokens",
    ],
)
def test_open_api_beyond_loopback_is_warned_about(host: str, read_env: str, warned: bool) -> None:
    warning = exposure_warning(AccessConfig.load(read_env=read_env), host)
    assert (warning is not None) == warned
    if warning:
        assert host in warning and "FACTLEDGER_READ_TOKENS" in warning
