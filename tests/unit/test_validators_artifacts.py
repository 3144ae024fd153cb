"""presupposed_artifact: a downloaded or saved file that no tool of the session made."""

from __future__ import annotations

import pytest

from factledger.processors.kinds import Kind
from factledger.processors.model import ToolCall, Turn
from factledger.processors.validators.artifacts import ArtifactValidator

READ = ToolCall(name="read_page", call_id="c1", arguments={"url": "x"}, result="Page text.")


def turn(reply: str, *calls: ToolCall, history: tuple[ToolCall, ...] = (), user: str = "") -> Turn:
    return Turn(
        reply=reply,
        user_message=user or "Find the figure in the paper.",
        tool_calls=calls,
        history_tool_calls=history,
    )


def call(name: str, result: str, *, error: bool = False, **arguments: str) -> ToolCall:
    return ToolCall(name=name, call_id="c2", arguments=arguments, result=result, error=error)


POSITIVE = [
    pytest.param(
        turn("Let's examine the downloaded PDF for the figure."), id="examine-downloaded-pdf"
    ),
    pytest.param(
        turn("The saved report lists three incidents.", READ), id="saved-report-read-only"
    ),
    pytest.param(turn("The file I saved holds the table.", READ), id="file-i-saved"),
    pytest.param(
        turn(
            "The downloaded file shows the figure.",
            history=(call("download_file", "HTTP 404", error=True),),
        ),
        id="failed-download-in-history",
    ),
    pytest.param(turn("Die heruntergeladene Datei zeigt die Abbildung."), id="de-heruntergeladene"),
    pytest.param(
        turn("Das PDF, das ich heruntergeladen habe, nennt drei Achsen."), id="de-das-ich-habe"
    ),
]

NEGATIVE = [
    pytest.param(
        turn(
            "The downloaded PDF shows three axes.",
            call("download_file", "ok", url="https://arxiv.org/pdf/2206.1"),
        ),
        id="download-tool-ran",
    ),
    pytest.param(
        turn(
            "The saved report lists three incidents.",
            history=(call("run_query", "Report saved to /tmp/report.csv"),),
        ),
        id="history-result-records-a-save",
    ),
    pytest.param(
        turn(
            "Let's inspect the downloaded PDF.",
            call("execute_code", "exitcode: 1", error=True, code="arxiv_download([pid])"),
        ),
        id="this-turns-code-downloads-even-if-it-failed",
    ),
    pytest.param(turn("Once downloaded, the downloaded file will be checked."), id="future"),
    pytest.param(turn("I haven't opened the downloaded PDF yet: no file exists."), id="negated"),
    pytest.param(turn("Can you share the downloaded PDF?"), id="question"),
    pytest.param(turn("Thanks: the file you downloaded is fine."), id="users-download"),
    pytest.param(
        turn("The downloaded PDF names three axes.", user="I attached paper.pdf for you."),
        id="user-gave-the-file",
    ),
    pytest.param(
        turn("```python\n# Extract images from the downloaded PDF\nextract(pdf)\n```"),
        id="words-in-code",
    ),
    pytest.param(
        turn("For example, the saved report would list incidents."), id="for-example-conditional"
    ),
]


@pytest.mark.parametrize("case", POSITIVE)
def test_presupposed_artifact(case: Turn) -> None:
    findings = ArtifactValidator()(case)
    assert [f.kind for f in findings] == [Kind.PRESUPPOSED_ARTIFACT]
    assert findings[0].span is not None
    start, end = findings[0].span.start, findings[0].span.end
    assert case.reply[start:end] == findings[0].token


@pytest.mark.parametrize("case", NEGATIVE)
def test_no_presupposed_artifact(case: Turn) -> None:
    assert ArtifactValidator()(case) == ()
