"""The classes of hallucination, declared once in processors/kinds.py: every kind belongs
to one of them (or, `validator_error` alone, to none), and each has its meaning."""

from __future__ import annotations

import pytest

from factledger.processors.kinds import (
    CLASS_MEANINGS,
    HALLUCINATION_CLASSES,
    KIND_INFO,
    SUSPICION_CLASS,
    UNCLASSIFIED,
    Kind,
    hallucination_class_of,
)


def test_every_kind_has_a_class_and_only_validator_error_has_none() -> None:
    unclassified = [k for k, info in KIND_INFO.items() if info.hallucination_class == UNCLASSIFIED]
    assert set(KIND_INFO) == set(Kind)
    assert unclassified == [Kind.VALIDATOR_ERROR]
    assert {info.hallucination_class for info in KIND_INFO.values()} == {
        *HALLUCINATION_CLASSES,
        UNCLASSIFIED,
    }


def test_every_class_has_its_meaning_in_order() -> None:
    assert tuple(CLASS_MEANINGS) == HALLUCINATION_CLASSES
    assert HALLUCINATION_CLASSES[:6] == ("1", "2", "3", "4", "4b", "5")
    assert KIND_INFO[Kind.CONFABULATED_IDENTIFIER_SET].hallucination_class == SUSPICION_CLASS


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        pytest.param("4b", "4b", id="class"),
        pytest.param("mirror", "mirror", id="named-class"),
        pytest.param(UNCLASSIFIED, None, id="unclassified"),
        pytest.param("", None, id="empty"),
        pytest.param("4B", None, id="unknown"),
    ],
)
def test_a_stored_class_is_shown_as_a_class_or_none(stored: str, shown: str | None) -> None:
    assert hallucination_class_of(stored) == shown
