"""placeholder_as_result: placeholder inputs in code that ran, made-up data reported as found."""

from __future__ import annotations

import pytest

from factledger.processors.kinds import Kind
from factledger.processors.model import ToolCall, Turn
from factledger.processors.validators.placeholders import PlaceholderValidator


def ran(code: str, prose: str = "Computer_terminal, please run this.", *, failed: bool = False):
    """A reply whose fenced code an executor ran (the code is the call's argument)."""
    call = ToolCall(
        name="execute_code",
        call_id="exec_1",
        arguments={"code": code},
        result="exitcode: 1 (execution failed)" if failed else "exitcode: 0 (execution succeeded)",
        error=failed,
    )
    return Turn(reply=f"{prose}\n\n```python\n{code}\n```", tool_calls=(call,))


def said(reply: str) -> Turn:
    return Turn(reply=reply, user_message="How many reference works does ScienceDirect list?")


SIMULATED = (
    "# Simulated dataset\n"
    "data = {'price': [900000, 850000]}\n"
    "df = pd.DataFrame(data)\n"
    'print("The lowest price a house sold for in January 2023 is:", df.price.min())'
)

POSITIVE = [
    pytest.param(
        ran("videoId = 'example_video_id'\ncaptions = get_caption(videoId)"), id="example-id"
    ),
    pytest.param(
        ran("paper_id = '2206.XXXX'  # Replace with actual arXiv ID\npdf = download(paper_id)"),
        id="xxxx-id-with-replace-comment",
    ),
    pytest.param(
        ran("API_ENDPOINT = 'http://example.com/api/weather'\nr = requests.get(API_ENDPOINT)"),
        id="example-com-endpoint",
    ),
    pytest.param(
        ran(
            "paper_id = get_id()  # replace with the actual paper id\nfetch(paper_id)",
            "Note: the placeholders need to be replaced with actual values.",
            failed=True,
        ),
        id="replace-comment-in-code-that-failed-despite-an-honest-note",
    ),
    pytest.param(ran(SIMULATED), id="simulated-data-printed-as-the-answer"),
    pytest.param(
        said(
            "I can't reach the site, so here is hypothetical data. After browsing ScienceDirect, "
            "I have compiled the following: Life Science 150 reference works."
        ),
        id="hypothetical-data-reported-as-browsed",
    ),
    pytest.param(
        said(
            "We provide the following hypothetical note analysis. Upon inspection of the image, "
            "the notes are identified as follows: G, B, D."
        ),
        id="hypothetical-analysis-then-upon-inspection",
    ),
    pytest.param(
        said(
            "Da die Quelle fehlt, nehme ich fiktive Daten. Nach Durchsicht der Tabelle habe ich "
            "ermittelt: 42 Einträge."
        ),
        id="de-fiktive-daten-nach-durchsicht",
    ),
]

NEGATIVE = [
    pytest.param(
        Turn(reply="```python\nvideoId = 'example_video_id'\nget_caption(videoId)\n```"),
        id="placeholder-in-code-nothing-ran",
    ),
    pytest.param(
        ran("gmaps = googlemaps.Client(key='YOUR_API_KEY')  # Replace with your API key"),
        id="credential-placeholder-is-no-data",
    ),
    pytest.param(
        ran(
            "sample = [3, 1, 2]\nassert sorted_copy(sample) == [1, 2, 3]\n"
            "print(sorted_copy(sample))"
        ),
        id="test-input-without-an-answer",
    ),
    pytest.param(
        ran("# Simulated dataset\ndata = [1, 2]\nprint('Simulated minimum is:', min(data))"),
        id="printed-answer-says-it-is-simulated",
    ),
    pytest.param(
        said(
            "Here is a hypothetical scenario for illustration purposes (this won't match the "
            "actual image). Upon inspection of the real image we can decide."
        ),
        id="honest-illustration",
    ),
    pytest.param(
        said(
            "For example, a sample dataset could have columns date and price; "
            "we need the real data."
        ),
        id="for-example-framing",
    ),
    pytest.param(
        said("Dies sind nur zur Veranschaulichung Beispieldaten. Nach Durchsicht sehen wir mehr."),
        id="de-nur-zur-veranschaulichung",
    ),
    pytest.param(
        said("After browsing ScienceDirect, I have compiled the counts: 150 and 170."),
        id="found-data-not-declared-made-up",
    ),
    pytest.param(
        said("The log line `simulated data loaded` is old. I have found no other entry."),
        id="made-up-words-in-quoted-code",
    ),
]


@pytest.mark.parametrize("turn", POSITIVE)
def test_placeholder_or_made_up_data_reported_as_a_result(turn: Turn) -> None:
    findings = PlaceholderValidator()(turn)
    assert [f.kind for f in findings] == [Kind.PLACEHOLDER_AS_RESULT]
    assert findings[0].token


@pytest.mark.parametrize("turn", NEGATIVE)
def test_no_placeholder_result(turn: Turn) -> None:
    assert PlaceholderValidator()(turn) == ()


def test_the_placeholder_the_reply_shows_first_is_the_token() -> None:
    code = "a = '2206.XXXX'  # first\nb = '1608.XXXX'  # second\nfetch(a, b)"
    (found,) = PlaceholderValidator()(ran(code))
    assert found.token == "'2206.XXXX'"
    assert found.call_id == "exec_1"
    assert found.span is not None
