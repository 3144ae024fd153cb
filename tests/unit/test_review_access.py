"""Review tokens: who may label and withdraw labels, apart from who may read; a token's
fingerprint, the identity recorded for what it wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.collector.access import (
    OPEN_SCOPE,
    AccessConfig,
    ReadScope,
    token_fingerprint,
)
from factledger.collector.settings import ServiceSettings
from factledger.processors.errors import ConfigError

ACME_IN = "acme-ingest-token-0001"
ACME_READ = "acme-read-token-000003"
ACME_REVIEW = "acme-review-token-0005"
OPS_REVIEW = "operations-review-tok-6"

TOKENS_FILE = f"""
[ingest]
"{ACME_IN}" = "acme"

[read]
"{ACME_READ}" = ["acme"]

[review]
"{ACME_REVIEW}" = ["acme"]
"""


def _config(tmp_path: Path) -> AccessConfig:
    path = tmp_path / "tokens.toml"
    path.write_text(TOKENS_FILE, encoding="utf-8")
    return AccessConfig.load(file=path, review_env=f"*:{OPS_REVIEW}")


@pytest.mark.parametrize(
    ("header", "review", "read"),
    [
        (f"Bearer {ACME_REVIEW}", ReadScope(frozenset({"acme"})), ReadScope(frozenset({"acme"}))),
        (f"Bearer {OPS_REVIEW}", OPEN_SCOPE, OPEN_SCOPE),
        (f"Bearer {ACME_READ}", None, ReadScope(frozenset({"acme"}))),
        (f"Bearer {ACME_IN}", None, None),
        ("", None, None),
    ],
    ids=[
        "review-token-reviews-and-reads-its-tenant",
        "operator-review-token",
        "read-token-may-not-review",
        "ingest-token-neither",
        "no-token-neither",
    ],
)
def test_review_scopes(
    tmp_path: Path, header: str, review: ReadScope | None, read: ReadScope | None
) -> None:
    config = _config(tmp_path)
    assert config.review_scope(header) == review
    assert config.read_scope(header) == read


def test_a_token_both_reading_and_reviewing_reads_the_union() -> None:
    config = AccessConfig.load(read_env=f"globex:{ACME_REVIEW}", review_env=f"acme:{ACME_REVIEW}")
    assert config.read_scope(f"Bearer {ACME_REVIEW}") == ReadScope(frozenset({"acme", "globex"}))
    assert config.review_scope(f"Bearer {ACME_REVIEW}") == ReadScope(frozenset({"acme"}))
    assert config.tenants == {"acme", "globex"}


def test_without_tokens_everyone_may_review() -> None:
    assert AccessConfig.load().review_scope("") == OPEN_SCOPE


def test_review_tokens_alone_close_the_query_api() -> None:
    config = AccessConfig.load(review_env=f"acme:{ACME_REVIEW}")
    assert config.read_required
    assert config.read_scope("") is None and config.review_scope("") is None


@pytest.mark.parametrize(
    ("env", "refusal"),
    [
        ({"FACTLEDGER_REVIEW_TOKENS": f"acme:{ACME_REVIEW}"}, None),
        ({"FACTLEDGER_INGEST_TOKEN": ACME_IN, "FACTLEDGER_REVIEW_TOKENS": f"*:{OPS_REVIEW}"}, None),
        (
            {"FACTLEDGER_REVIEW_TOKENS": f"acme:{ACME_REVIEW}", "FACTLEDGER_API_OPEN": "1"},
            "contradicts",
        ),
        ({"FACTLEDGER_REVIEW_TOKENS": "acme"}, "FACTLEDGER_REVIEW_TOKENS"),
        ({"FACTLEDGER_REVIEW_TOKENS": "acme:short"}, "at least 16"),
    ],
    ids=[
        "review-tokens-only",
        "ingest-and-review-tokens",
        "open-api-with-review-tokens-contradicts",
        "missing-separator-names-the-variable",
        "short-token",
    ],
)
def test_service_settings_read_the_review_variable(
    env: dict[str, str], refusal: str | None
) -> None:
    if refusal is None:
        assert ServiceSettings.from_env(env).access.read_required
    else:
        with pytest.raises(ConfigError, match=refusal):
            ServiceSettings.from_env(env)


def test_review_table_values_are_tenant_lists(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text('[review]\n"long-enough-token-00001" = [3]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[review\] values are lists of tenant names"):
        AccessConfig.load(file=path)


def test_a_fingerprint_names_a_token_without_giving_it_away() -> None:
    shown = token_fingerprint(f"Bearer {ACME_REVIEW}")
    assert shown == token_fingerprint(f"bearer  {ACME_REVIEW} ")
    assert shown.startswith("sha256:") and len(shown) == len("sha256:") + 12
    assert ACME_REVIEW not in shown and shown != token_fingerprint(f"Bearer {OPS_REVIEW}")
    assert token_fingerprint("") == ""
