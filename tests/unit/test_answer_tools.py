"""A call that delivered the reply is told by its text: its result is the reply, but for
whitespace or JSON formatting, or its one text argument is (`evidence.answer_tools`)."""

from __future__ import annotations

import pytest

from factledger.processors.evidence.answer_tools import with_answer_calls
from factledger.processors.model import ToolCall

REPLY = "Order #W1 shipped with UPS.\nIt arrives on Friday."


@pytest.mark.parametrize(
    ("result", "answer"),
    [
        (REPLY, True),
        ("  Order #W1   shipped with UPS. It arrives\ton Friday.  ", True),
        ("Order #W1 shipped with UPS.", False),
        ("order #W1 shipped with UPS. It arrives on Friday.", False),
        ("Order #W1 shipped with UPS. It arrives on Friday!", False),
        ('{"status": "shipped"}', False),
        ("", False),
    ],
    ids=[
        "the reply itself",
        "the reply but for whitespace",
        "a part of it",
        "another first word",
        "another last word",
        "a record",
        "empty",
    ],
)
def test_a_last_step_call_whose_result_is_the_reply_delivered_it(result: str, answer: bool) -> None:
    call = ToolCall(name="respond", call_id="c1", result=result, step=1)
    (marked,) = with_answer_calls([call], REPLY, last_step=1)
    assert marked.answer is answer


def test_a_json_result_delivers_a_json_reply_however_it_is_spaced() -> None:
    call = ToolCall(name="respond", call_id="c1", result='{"a": 1, "b": [2, 3]}', step=0)
    reply = '{\n  "b": [2,3],\n  "a": 1\n}'
    assert with_answer_calls([call], reply, last_step=0)[0].answer
    assert not with_answer_calls([call], '{"a": 2}', last_step=0)[0].answer


def test_a_call_of_an_earlier_step_never_delivered_the_reply() -> None:
    call = ToolCall(name="respond", call_id="c1", result=REPLY, step=0)
    assert not with_answer_calls([call], REPLY, last_step=1)[0].answer
