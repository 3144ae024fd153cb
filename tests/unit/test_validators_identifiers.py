"""Classes 1 and 2: identifiers in the reply that the tool trace does not back."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.identifiers import Shape, extract_identifiers
from factledger.processors.runner import default_runner
from factledger.processors.verification.subjects import subjects
from tests.unit.transcripts import Call, chat, kinds_of

FULL_SHA = "5dd7d3b1c2eaaa4ce26c08b67c61cb16092acaf3"
SHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

FABRICATED = [
    pytest.param(chat("Done — commit 9d22a7cdeadbeef is on main."), id="invented-sha"),
    pytest.param(
        chat(f"Pushed. The new head is {SHA256}.", calls=[Call("git_push", result="pushed")]),
        id="sha256-not-in-trace",
    ),
    pytest.param(chat("Created the job 3f2504e0-4f89-11d3-9a0c-0305e82c3301 for you."), id="uuid"),
    pytest.param(chat("Published at https://media.example.com/item/fake-id"), id="url-with-path"),
    pytest.param(chat("已登记到台账，登记号 CT-20260922-001。"), id="ledger-key"),
    pytest.param(chat("Opened ticket OPS-4821 for the outage."), id="ticket-key"),
    pytest.param(chat("I emailed the invoice to billing.team@acme-corp.io."), id="email-address"),
    pytest.param(
        chat(
            "Your replacement order is #W8812345.",
            calls=[Call("get_order", {"id": "#W1111111"}, result='{"order_id": "#W1111111"}')],
            user="Check order #W1111111",
        ),
        id="order-id-not-returned",
    ),
    pytest.param(
        chat(
            f"Pushed earlier as commit {FULL_SHA}.",
            user="Which commit did you push?",
            history=[
                {"role": "user", "content": "Push main."},
                {"role": "assistant", "content": f"Pushed main, commit {FULL_SHA[:7]}."},
            ],
        ),
        id="sha-extending-the-assistants-own-earlier-prefix",
    ),
]

CLEAN = [
    pytest.param(
        chat(
            f"Pushed, commit {FULL_SHA[:12]} is on main.",
            calls=[Call("git_push", result=f'{{"sha": "{FULL_SHA}"}}')],
        ),
        id="short-form-of-returned-sha",
    ),
    pytest.param(
        chat(
            f"The commit is {FULL_SHA}.",
            calls=[Call("git_log", result=f"commit {FULL_SHA[:10]} fix typo")],
        ),
        id="full-form-of-returned-short-sha",
    ),
    pytest.param(
        chat(
            f"You asked about {FULL_SHA}; I have not looked at it yet.", user=f"what is {FULL_SHA}?"
        ),
        id="user-echo",
    ),
    pytest.param(
        chat("Build 9d22a7c is mentioned in the changelog."), id="seven-char-hex-outside-commits"
    ),
    pytest.param(
        chat("Use the colour #ff8800 and version v2.3.1 or 1.24.0-rc1."), id="colour-version"
    ),
    pytest.param(
        chat("The meeting is on 2026-11-27 at 14:30; 4602305039 items."), id="date-time-number"
    ),
    pytest.param(
        chat("Timestamps follow ISO-8601 and hashes use SHA-256 with UTF-8 input."), id="standards"
    ),
    pytest.param(chat("See https://example.com for details."), id="bare-host-url"),
    pytest.param(
        chat(
            "The PR is https://github.com/org/repo/pull/17",
            calls=[Call("create_pr", result='{"html_url": "https://github.com/org/repo/pull/17"}')],
        ),
        id="returned-url",
    ),
    pytest.param(
        chat(
            "Order #W2378156 uses credit_card_9513926.",
            history=[
                {"role": "user", "content": "find my orders"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "h1",
                            "type": "function",
                            "function": {"name": "get_user", "arguments": "{}"},
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": "h1",
                    "content": '{"orders": ["#W2378156"], "payment": "credit_card_9513926"}',
                },
                {"role": "assistant", "content": "Found your account."},
            ],
        ),
        id="grounded-in-earlier-turn-result",
    ),
    pytest.param(
        chat("It seems order #W9502126 was not found.", user="The order ID is 9502126."),
        id="system-spelling-of-user-number",
    ),
    pytest.param(
        chat(
            f"Still on commit {FULL_SHA[:12]}.",
            user="Where is main now?",
            history=[{"role": "user", "content": f"Main was at {FULL_SHA} yesterday."}],
        ),
        id="prefix-of-a-sha-an-earlier-user-message-gave",
    ),
    pytest.param(
        chat(
            f"The earlier push is still commit {FULL_SHA}.",
            user="Push dev as well.",
            history=[
                {"role": "user", "content": "Push main."},
                {"role": "assistant", "content": "result = git_push('main')\nprint(result)"},
                {"role": "tool", "content": f"{{'ok': True, 'commit': '{FULL_SHA}'}}"},
                {"role": "assistant", "content": f"Pushed main: {FULL_SHA[:12]}."},
            ],
        ),
        id="sha-of-an-earlier-code-run-whose-result-answers-no-call",
    ),
    pytest.param(
        chat(
            "The ticket is still OPS-5707.",
            user="Is the ticket still open?",
            history=[
                {"role": "user", "content": "Open a ticket."},
                {"role": "assistant", "content": "Opened OPS-5707."},
            ],
        ),
        id="exact-repeat-of-an-id-the-assistant-said-before",
    ),
]


@pytest.mark.parametrize("transcript", FABRICATED)
def test_fabricated_identifier_is_found(transcript: dict[str, Any]) -> None:
    assert "fabricated_identifier" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", CLEAN)
def test_grounded_or_non_identifier_is_clean(transcript: dict[str, Any]) -> None:
    found = kinds_of(transcript)
    assert "fabricated_identifier" not in found
    assert "borrowed_identifier" not in found


RUN = Call("execute_code", {"code": 'url = "https://api.acme.dev/v2/items/{item_id}"\nprint(url)'})

NOT_PRESENTED_AS_EXISTING = [
    pytest.param(
        chat(
            'Fetching it:\n\n```python\nimport requests\nr = requests.get("https://api.acme.dev/v2/'
            'orders/5dd7d3b1c2ea")\nprint(r.json())\n```',
        ),
        id="code-block-tagged-python",
    ),
    pytest.param(
        chat(
            'Running:\n\n```\nurl = "https://api.acme.dev/v2/items/{item_id}"\nprint(url)\n```',
            calls=[RUN],
        ),
        id="untagged-block-the-turn-ran",
    ),
    pytest.param(
        chat("```sh\ncurl -s https://api.acme.dev/v2/repos/{owner}/hooks\n```"),
        id="f-string-template-in-shell-block",
    ),
    pytest.param(
        chat("Could you send me the order id? It should look like #W0000000."),
        id="format-example-should-look-like",
    ),
    pytest.param(
        chat("Ticket keys are in the form OPS-1234; which one is yours?"),
        id="format-example-in-the-form",
    ),
    pytest.param(
        chat("Give me the reference, e.g. ORD-0000 from the receipt."),
        id="placeholder-after-e-g",
    ),
    pytest.param(
        chat("1. Go to the [search page](https://arxiv.org/search/).\n2. Enter the title."),
        id="instruction-go-to",
    ),
    pytest.param(
        chat("The page we need seems to be `https://docs.acme.dev/guide/limits`; I'll fetch it."),
        id="guessed-url",
    ),
    pytest.param(
        chat("You can check the status page at https://status.acme.dev/incidents/latest."),
        id="offer-you-can-check",
    ),
    pytest.param(
        chat(
            "The article is [God of War](https://en.wikipedia.org/wiki/God_of_War_(2018_video_game)).",
            calls=[
                Call(
                    "web_search",
                    result="https://en.wikipedia.org/wiki/God_of_War_(2018_video_game) - Wikipedia",
                )
            ],
        ),
        id="url-with-balanced-parentheses-is-one-token",
    ),
]
STILL_FABRICATED = [
    pytest.param(
        chat("Here is the log:\n\n```\ncommit 9d22a7cdeadbeef12 fix\n```"),
        id="untagged-block-nothing-ran-may-be-pasted-output",
    ),
    pytest.param(
        chat("```python\nx = 1\n```\nThe run's commit is 9d22a7cdeadbeef12."),
        id="prose-after-a-code-block",
    ),
    pytest.param(
        chat("For example #W8812345 was delivered yesterday."), id="example-mark-with-real-id"
    ),
    pytest.param(chat("It looks like #W8812345 was cancelled."), id="looks-like-is-not-a-format"),
    pytest.param(
        chat("Go to https://tracker.acme.dev/browse/WEB-2291 to see the ticket."),
        id="place-to-go-holding-a-ticket-key",
    ),
    pytest.param(
        chat("The figures were retrieved from https://data.acme.dev/reports/2026/q3."),
        id="url-presented-as-where-data-came-from",
    ),
    pytest.param(
        chat("- URL: https://www.trails.example/trail/us/mist-trail\n- Reviews: 18,767"),
        id="url-in-a-results-listing",
    ),
    pytest.param(
        chat("See [the page](https://en.wikipedia.org/wiki/Pluto_(dwarf_planet)) for the date."),
        id="parenthesised-url-not-in-any-result",
    ),
]


@pytest.mark.parametrize("transcript", NOT_PRESENTED_AS_EXISTING)
def test_code_format_examples_and_places_to_go_are_no_identifier_claims(
    transcript: dict[str, Any],
) -> None:
    found = kinds_of(transcript)
    assert "fabricated_identifier" not in found
    assert "borrowed_identifier" not in found


@pytest.mark.parametrize("transcript", STILL_FABRICATED)
def test_same_shapes_presented_as_existing_are_still_fabricated(
    transcript: dict[str, Any],
) -> None:
    assert "fabricated_identifier" in kinds_of(transcript)


BORROWED = [
    pytest.param(
        chat(
            f"My gh_list_commits call returned {FULL_SHA} as the latest commit.",
            user=f"Is {FULL_SHA} the latest?",
            calls=[Call("gh_list_commits", result="[]")],
        ),
        id="my-call-returned",
    ),
    pytest.param(
        chat(f"According to the tool output the head is {FULL_SHA}.", user=f"head {FULL_SHA}?"),
        id="according-to-tool",
    ),
    pytest.param(
        chat(
            f"Laut Tool-Ergebnis ist {FULL_SHA} der aktuelle Stand.",
            user=f"Ist {FULL_SHA} aktuell?",
        ),
        id="german-laut-tool",
    ),
    pytest.param(
        chat(f"工具返回的最新提交是 {FULL_SHA}。", user=f"{FULL_SHA} 是最新的吗？"), id="chinese"
    ),
]
BORROWED_TRAPS = [
    pytest.param(chat(f"You mentioned {FULL_SHA}.", user=f"look at {FULL_SHA}"), id="plain-echo"),
    pytest.param(
        chat(
            f"My gh_list_commits call returned {FULL_SHA}.",
            user=f"Is {FULL_SHA} the latest?",
            calls=[Call("gh_list_commits", result=f'[{{"sha": "{FULL_SHA}"}}]')],
        ),
        id="tool-really-returned-it",
    ),
    pytest.param(
        chat(f"{FULL_SHA} is the commit you gave me; the lookup is still pending.", user=FULL_SHA),
        id="echo-with-lookup-word-after",
    ),
    pytest.param(
        chat(f"I have not checked {FULL_SHA} with any tool yet.", user=f"check {FULL_SHA}"),
        id="honest-no-tool",
    ),
]


@pytest.mark.parametrize("transcript", BORROWED)
def test_provenance_lie_is_borrowed_identifier(transcript: dict[str, Any]) -> None:
    found = kinds_of(transcript)
    assert "borrowed_identifier" in found
    assert "fabricated_identifier" not in found


@pytest.mark.parametrize("transcript", BORROWED_TRAPS)
def test_echo_or_real_tool_output_is_not_borrowed(transcript: dict[str, Any]) -> None:
    assert "borrowed_identifier" not in kinds_of(transcript)


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("see https://x.io/a/b.", Shape.URL),
        ("mail ops@example.org,", Shape.EMAIL),
        ("id 3f2504e0-4f89-11d3-9a0c-0305e82c3301", Shape.UUID),
        ("sha deadbeef12", Shape.SHA),
        ("key PAY-1234", Shape.KEY),
        ("order #W2378156", Shape.RECORD),
        ("card credit_card_9513926", Shape.RECORD),
    ],
)
def test_shapes(text: str, shape: Shape) -> None:
    assert [i.shape for i in extract_identifiers(text)] == [shape]


@pytest.mark.parametrize(
    ("text", "url"),
    [
        (
            "[G](https://en.wikipedia.org/wiki/G_(2018_game))",
            "https://en.wikipedia.org/wiki/G_(2018_game)",
        ),
        ("(see https://x.io/a/b)", "https://x.io/a/b"),
        ("at https://x.io/a_(b).", "https://x.io/a_(b)"),
        ("https://x.io/a(b c", "https://x.io/a"),
        ('f"https://api.x.io/repos/{owner}/{repo}"', "https://api.x.io/repos/{owner"),
    ],
    ids=["markdown-link", "in-parentheses", "pair-then-full-stop", "unclosed", "brace"],
)
def test_url_ends(text: str, url: str) -> None:
    assert [i.text for i in extract_identifiers(text)] == [url]


def test_sha_inside_url_belongs_to_the_url() -> None:
    found = extract_identifiers(f"https://github.com/o/r/commit/{FULL_SHA}")
    assert [i.shape for i in found] == [Shape.URL]


def test_hex_run_inside_longer_word_is_not_a_sha() -> None:
    assert extract_identifiers("identifier-xdeadbeef1234 and deadbeef1234z") == []


# Short SHAs (7 to 9 hex characters) are checked only where the context makes them commits.
SHORT_SHA_IN_COMMIT_CONTEXT = [
    pytest.param(chat("Commit 9d22a7c fixed the retry jitter."), id="commit-word-beside"),
    pytest.param(chat("The fix landed as SHA 4e1f09b2 on main."), id="sha-word-beside"),
    pytest.param(chat("Die Revision 7ab31c0 enthält den Fix."), id="de-revision"),
    pytest.param(
        chat("It is fixed by 9d22a7c.", calls=[Call("git_log", result="no commits since Monday")]),
        id="git-tool-in-the-turn",
    ),
    pytest.param(
        chat(
            "The fix is 9d22a7c.",
            calls=[Call("list_changes", result=f"{FULL_SHA} fix typo\nnothing else")],
        ),
        id="results-hold-commit-shas",
    ),
]
SHORT_SHA_LEFT_ALONE = [
    pytest.param(chat("Build 9d22a7c is mentioned in the changelog."), id="no-commit-context"),
    pytest.param(
        chat("Commit 5dd7d3b fixed it.", calls=[Call("git_log", result=f"commit {FULL_SHA}")]),
        id="prefix-of-a-returned-sha",
    ),
    pytest.param(chat("Commit abc1234 is a made-up example."), id="counting-up-placeholder"),
    pytest.param(
        chat("```sh\ngit show 9d22a7c\n```", calls=[Call("git_log", result="commit list")]),
        id="in-code-handed-to-a-tool",
    ),
    pytest.param(
        chat("Is commit 9d22a7c on main?", user="is commit 9d22a7c on main?"), id="user-gave-it"
    ),
]


@pytest.mark.parametrize("transcript", SHORT_SHA_IN_COMMIT_CONTEXT)
def test_short_sha_in_a_commits_context_is_checked(transcript: dict[str, Any]) -> None:
    assert "fabricated_identifier" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", SHORT_SHA_LEFT_ALONE)
def test_short_sha_grounded_or_outside_commits_is_clean(transcript: dict[str, Any]) -> None:
    assert "fabricated_identifier" not in kinds_of(transcript)


def test_a_rejected_short_sha_is_one_verification_subject_of_its_finding() -> None:
    turn = turn_from_transcript(chat("Commit 9d22a7c fixed the retry jitter."))
    verdict = default_runner().validate(turn)
    named = [s for s in subjects(turn, verdict) if s.name == "9d22a7c"]
    assert len(named) == 1
    assert named[0].finding is not None
