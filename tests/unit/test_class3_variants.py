"""Class 3 by construction: whatever words a failed call's text holds, a reply claiming its
action is rejected; a successful call whose data holds failure words still backs it.

Every action x language x form x error mark x result shape x claim is one variant; the
counts per verb and language are asserted, so a shrinking table cannot pass unnoticed.
"""

from __future__ import annotations

from collections import Counter

import pytest

from factledger.processors.kinds import Kind, Outcome

from .class3_cases import ACTIONS, Action, claims, failed_results, failure_texts, judge, marked


def _failures(action: Action) -> list[tuple[str, str, str, str, bool]]:
    """(language, form, shape, result, error mark), each with every claim of its language."""
    out = []
    for (language, form), texts in failure_texts(action).items():
        for text in texts:
            for variant in marked(text):
                for shape, result, error in failed_results(variant):
                    out.append((language, form, shape, result, error))
    return out


@pytest.mark.parametrize("action", ACTIONS, ids=[a.tool for a in ACTIONS])
def test_every_failure_text_refutes_every_claim_of_its_action(action: Action) -> None:
    missed = []
    counted: Counter[str] = Counter()
    for language, form, shape, result, error in _failures(action):
        for claim_language, replies in claims(action).items():
            for reply in replies:
                verdict = judge(action, result, reply, error=error)
                counted[claim_language] += 1
                if verdict.outcome is not Outcome.REJECT or (
                    Kind.ERROR_REPORTED_AS_SUCCESS.value not in verdict.kinds
                ):
                    missed.append((language, form, shape, result, reply, verdict.kinds))
    assert not missed, f"{len(missed)} variants not rejected as class 3, e.g. {missed[:5]}"
    # 27 texts (15 English, 6 German, 6 Chinese) x 4 marks x 5 shapes, each against 4
    # English, 2 German and 2 Chinese claims.
    assert counted == {"en": 2_160, "de": 1_080, "zh": 1_080}


@pytest.mark.parametrize("action", ACTIONS, ids=[a.tool for a in ACTIONS])
def test_a_successful_call_with_failure_words_in_its_data_backs_every_claim(
    action: Action,
) -> None:
    from .class3_cases import success_texts

    wrong = []
    for result in success_texts(action):
        for replies in claims(action).values():
            for reply in replies:
                verdict = judge(action, result, reply)
                if verdict.outcome is Outcome.REJECT:
                    wrong.append((result, reply, verdict.kinds))
    assert not wrong, f"{len(wrong)} successful calls judged as failed, e.g. {wrong[:5]}"


@pytest.mark.parametrize("action", ACTIONS, ids=[a.tool for a in ACTIONS])
def test_an_honest_report_of_the_failure_is_clean(action: Action) -> None:
    honest = {
        "en": f"The {action.base} failed: {action.thing} was not {action.participle}.",
        "de": f"Das hat nicht geklappt: {action.de_thing} wurde nicht {action.de_participle}.",
        "zh": f"{action.zh_verb}失败，{action.zh_thing}未{action.zh_verb}。",
    }
    for (language, _), texts in failure_texts(action).items():
        verdict = judge(action, texts[0], honest[language])
        assert Kind.ERROR_REPORTED_AS_SUCCESS.value not in verdict.kinds, (texts[0], verdict)
        assert Kind.CLAIM_WITHOUT_TOOL.value not in verdict.kinds, (texts[0], verdict)
