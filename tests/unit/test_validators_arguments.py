"""Invented inputs (class 4b, `ungrounded_tool_argument`): one table per rule of what
grounds an argument and what is no input at all."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.processors.evidence.grounding import Grounds, described_value_grounded
from tests.unit.transcripts import Call, chat, kinds_of, tool

KIND = "ungrounded_tool_argument"


def _long_session(first_user: str, filler: int = 12) -> list[dict[str, Any]]:
    """A first user message, then `filler` user/assistant exchanges about other things."""
    history: list[dict[str, Any]] = [
        {"role": "user", "content": first_user},
        {"role": "assistant", "content": "Noted."},
    ]
    for i in range(filler):
        history.append({"role": "user", "content": f"Also, what does step {i} of the guide say?"})
        history.append({"role": "assistant", "content": "It says to check the cable."})
    return history


WHOLE_CONVERSATION = [
    pytest.param(
        chat(
            "",
            history=_long_session("My order number is 7719304, the blue kettle."),
            user="Okay, now cancel that order please.",
            calls=[Call("cancel_order", {"order_id": "7719304"})],
        ),
        False,
        id="user-value-beyond-the-ten-message-window-grounds",
    ),
    pytest.param(
        chat(
            "",
            history=_long_session("Hi, I have a question about my kettle."),
            user="Okay, now cancel that order please.",
            calls=[Call("cancel_order", {"order_id": "7719304"})],
        ),
        True,
        id="value-nobody-gave-in-a-long-session-still-flagged",
    ),
]


@pytest.mark.parametrize(("transcript", "flagged"), WHOLE_CONVERSATION)
def test_user_values_anywhere_in_the_conversation(
    transcript: dict[str, Any], flagged: bool
) -> None:
    assert (KIND in kinds_of(transcript)) is flagged


CREATE_ISSUE = tool(
    "create_issue",
    required=("repo", "title", "body"),
    assignee={"type": "string"},
)
CHECK_VIDEOS = tool("check_videos", required=("title", "publisher"))
VISIT_PAGE = tool("visit_page", required=("url",))

AUTHORED_OR_LOOKUP = [
    pytest.param(
        chat(
            "",
            user="Open an issue in acme/api about the login timeout.",
            calls=[
                Call(
                    "create_issue",
                    {"repo": "acme/api", "title": "Login times out", "body": "Steps: ..."},
                )
            ],
            tools=[CREATE_ISSUE],
        ),
        False,
        id="title-and-body-of-a-created-issue-are-the-agents-work",
    ),
    pytest.param(
        chat(
            "",
            user="Write the release notes to a new file.",
            calls=[Call("write_file", {"path": "docs/notes-2.4.md"}, result=None)],
            tools=[tool("write_file", required=("path",))],
        ),
        False,
        id="path-of-a-file-being-written-is-the-agents-work",
    ),
    pytest.param(
        chat(
            "",
            user="Open an issue about the login timeout.",
            calls=[
                Call(
                    "create_issue",
                    {"repo": "acme/billing", "title": "Login", "body": "x"},
                    result=None,
                )
            ],
            tools=[CREATE_ISSUE],
        ),
        True,
        id="repo-a-created-issue-goes-to-is-a-reference",
    ),
    pytest.param(
        chat(
            "",
            user="Open an issue in acme/api about the login timeout.",
            calls=[
                Call(
                    "create_issue",
                    {"repo": "acme/api", "title": "t", "body": "b", "assignee": "jdoe42"},
                )
            ],
            tools=[CREATE_ISSUE],
        ),
        True,
        id="assignee-of-a-created-issue-is-a-reference",
    ),
    pytest.param(
        chat(
            "",
            user="Did TravelHistory publish a video tagged Taj Mahal?",
            calls=[
                Call("check_videos", {"title": "Secrets of Agra", "publisher": "TravelHistory"})
            ],
            tools=[CHECK_VIDEOS],
        ),
        True,
        id="title-of-a-looked-up-video-is-an-input",
    ),
]


@pytest.mark.parametrize(("transcript", "flagged"), AUTHORED_OR_LOOKUP)
def test_values_a_creating_tool_authors(transcript: dict[str, Any], flagged: bool) -> None:
    assert (KIND in kinds_of(transcript)) is flagged


LOADED_URLS = [
    pytest.param(
        chat(
            "",
            user="Who painted the portrait of Carl Nebel?",
            calls=[
                Call(
                    "visit_page",
                    {"url": "https://en.wikipedia.org/wiki/Carl_Nebel"},
                    result="Carl Nebel (1805-1855) was a German engineer and draughtsman",
                )
            ],
            tools=[VISIT_PAGE],
        ),
        False,
        id="guessed-url-the-browser-loaded-is-confirmed",
    ),
    pytest.param(
        chat(
            "",
            user="Who painted the portrait of Carl Nebel?",
            calls=[
                Call(
                    "visit_page",
                    {"url": "https://en.wikipedia.org/wiki/Carl_Nebel_portrait"},
                    result="Error: 404 Not Found",
                    is_error=True,
                )
            ],
            tools=[VISIT_PAGE],
        ),
        True,
        id="guessed-url-that-failed-to-load-stays-a-finding",
    ),
    pytest.param(
        chat(
            "",
            user="Notify our CI when the build finishes.",
            calls=[
                Call("create_webhook", {"url": "https://hooks.example.net/ci/8812"}, result="ok")
            ],
            tools=[tool("create_webhook", required=("url",))],
        ),
        True,
        id="url-a-creating-call-stores-is-not-confirmed-by-success",
    ),
]


@pytest.mark.parametrize(("transcript", "flagged"), LOADED_URLS)
def test_urls_a_reading_call_loaded(transcript: dict[str, Any], flagged: bool) -> None:
    assert (KIND in kinds_of(transcript)) is flagged


PROVINCE = tool(
    "get_service_providers",
    required=("province_id",),
    province_id={
        "type": "integer",
        "description": "The province, such as 1 for Bangkok, 2 for Chiang Mai.",
    },
)
DERIVED = [
    pytest.param(
        chat("", user="What is the host count for 2022?", calls=[Call("hosts", {"month": 2})]),
        True,
        id="number-inside-a-year-is-not-the-users-number",
    ),
    pytest.param(
        chat(
            "",
            user="Plan an outing for a group of friends.",
            calls=[Call("find_activity", {"participant_count": 5})],
        ),
        True,
        id="a-count-of-people-is-no-paging-knob",
    ),
    pytest.param(
        chat(
            "",
            user="Find an ironing service in the city.",
            calls=[Call("get_service_providers", {"province_id": 1})],
            tools=[PROVINCE],
        ),
        True,
        id="identifier-one-is-checked",
    ),
    pytest.param(
        chat(
            "",
            user="Find a maid in Bangkok.",
            calls=[Call("get_service_providers", {"province_id": 1})],
            tools=[PROVINCE],
        ),
        False,
        id="code-the-description-pairs-with-the-users-word",
    ),
    pytest.param(
        chat("", user="Move pointA to 2,3,4", calls=[Call("set_point", {"x": 2, "y": 3, "z": 4})]),
        False,
        id="comma-separated-list-is-three-numbers",
    ),
    pytest.param(
        chat(
            "",
            user="Keep only beats above the 93rd percentile.",
            calls=[Call("filter_beats", {"percentile": 93})],
        ),
        False,
        id="ordinal-number",
    ),
    pytest.param(
        chat(
            "",
            user="Book a room in Berkeley from August 15th to August 17th.",
            calls=[Call("reserve_hotel", {"location": "Berkeley", "stay_length": 2})],
        ),
        False,
        id="stay-length-from-the-dates-given",
    ),
    pytest.param(
        chat(
            "",
            user="Pop songs from seven years before 2023, please.",
            calls=[Call("lookup_music", {"genre": "Pop", "year": 2016})],
        ),
        False,
        id="year-relative-to-a-year-given",
    ),
    pytest.param(
        chat(
            "",
            user="Weather for London in the UK, please.",
            calls=[Call("get_weather", {"city": "London", "country": "GB"})],
        ),
        False,
        id="country-code-for-the-country-named",
    ),
    pytest.param(
        chat(
            "",
            user="What trips do I have in April 2023?",
            calls=[Call("events", {"start_date": "2023-04-01", "end_date": "2023-04-30"})],
        ),
        False,
        id="month-named-gives-its-first-and-last-day",
    ),
    pytest.param(
        chat(
            "",
            user="What trips do I have in April 2023?",
            calls=[Call("events", {"start_date": "2023-04-12"})],
        ),
        True,
        id="day-inside-a-month-named-is-still-invented",
    ),
]


@pytest.mark.parametrize(("transcript", "flagged"), DERIVED)
def test_numbers_codes_and_dates_derived_from_the_request(
    transcript: dict[str, Any], flagged: bool
) -> None:
    assert (KIND in kinds_of(transcript)) is flagged


def _enum(*members: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "enum": list(members), **extra}


FIND_EVENTS = tool(
    "find_events", required=("city", "event_type"), event_type=_enum("Music", "Theater")
)
BOOK_FLIGHT = tool(
    "book_flight",
    required=("route", "cabin"),
    cabin=_enum("Economy", "Premium Economy", "Business"),
)
FIND_MOVIES = tool("find_movies", required=("city",), genre=_enum("Drama", "Mystery", "Comedy"))
DEPLOY_STATUS = tool(
    "get_deploy_status",
    required=("service", "environment"),
    environment=_enum("staging", "production"),
)
DEPLOY = tool(
    "deploy_service",
    required=("service", "environment"),
    environment=_enum("staging", "production"),
)
TRANSLATE = tool("translate", required=("text", "target"), target=_enum("de", "fr", "es", "hi"))
WEATHER = tool(
    "get_weather",
    required=("city", "units"),
    units=_enum(
        "metric",
        "imperial",
        description="'metric' for Celsius and km/h, 'imperial' for Fahrenheit and mph.",
    ),
)
PUBLISH = tool(
    "publish_article", required=("article_id", "channel"), channel=_enum("website", "wechat")
)


def _one_call(user: str, name: str, arguments: dict[str, Any], tools: list[Any]) -> dict[str, Any]:
    return chat("", user=user, calls=[Call(name, arguments)], tools=tools)


ENUM_CHOICES = [
    pytest.param(
        _one_call(
            "Anything on in Chicago tonight?",
            "find_events",
            {"city": "Chicago", "event_type": "Theater"},
            [FIND_EVENTS],
        ),
        True,
        id="required-member-nobody-implied-is-invented",
    ),
    pytest.param(
        _one_call(
            "Any theater in Chicago tonight?",
            "find_events",
            {"city": "Chicago", "event_type": "Theater"},
            [FIND_EVENTS],
        ),
        False,
        id="member-the-user-named",
    ),
    pytest.param(
        _one_call(
            "Find me some musical events in Chicago.",
            "find_events",
            {"city": "Chicago", "event_type": "Music"},
            [FIND_EVENTS],
        ),
        False,
        id="word-sharing-the-members-stem",
    ),
    pytest.param(
        _one_call(
            "Book me an economy seat on JFK-LAX.",
            "book_flight",
            {"route": "JFK-LAX", "cabin": "Premium Economy"},
            [BOOK_FLIGHT],
        ),
        True,
        id="word-shared-with-another-member-does-not-choose-it",
    ),
    pytest.param(
        _one_call(
            "Book me a premium economy seat on JFK-LAX.",
            "book_flight",
            {"route": "JFK-LAX", "cabin": "Premium Economy"},
            [BOOK_FLIGHT],
        ),
        False,
        id="words-that-set-the-member-apart",
    ),
    pytest.param(
        _one_call(
            "Weather in Oslo, in Celsius please.",
            "get_weather",
            {"city": "Oslo", "units": "metric"},
            [WEATHER],
        ),
        False,
        id="member-the-description-pairs-with-the-users-word",
    ),
    pytest.param(
        _one_call(
            "Weather in Oslo, please.",
            "get_weather",
            {"city": "Oslo", "units": "imperial"},
            [WEATHER],
        ),
        True,
        id="unit-nobody-asked-for",
    ),
    pytest.param(
        _one_call(
            "Put 'good morning' into French.",
            "translate",
            {"text": "good morning", "target": "fr"},
            [TRANSLATE],
        ),
        False,
        id="language-code-for-the-language-named",
    ),
    pytest.param(
        _one_call(
            "Find a film in Leeds, something like a crime story.",
            "find_movies",
            {"city": "Leeds", "genre": "Mystery"},
            [FIND_MOVIES],
        ),
        False,
        id="optional-parameter-is-grounded-by-omission",
    ),
    pytest.param(
        _one_call(
            "把文章 A-17 发布到官网。",
            "publish_article",
            {"article_id": "A-17", "channel": "website"},
            [PUBLISH],
        ),
        False,
        id="request-in-another-script-is-not-decided-by-tokens",
    ),
    pytest.param(
        _one_call(
            "Is the checkout-web deploy stuck?",
            "get_deploy_status",
            {"service": "checkout-web", "environment": "production"},
            [DEPLOY_STATUS],
        ),
        False,
        id="a-lookup-of-the-live-scope-when-none-is-named",
    ),
    pytest.param(
        _one_call(
            "Is the checkout-web deploy stuck?",
            "get_deploy_status",
            {"service": "checkout-web", "environment": "staging"},
            [DEPLOY_STATUS],
        ),
        True,
        id="a-lookup-of-another-scope-nobody-named",
    ),
    pytest.param(
        _one_call(
            "Ship checkout-web 3.2.1.",
            "deploy_service",
            {"service": "checkout-web", "environment": "production"},
            [DEPLOY],
        ),
        True,
        id="an-action-on-the-live-scope-nobody-named",
    ),
    pytest.param(
        chat(
            "",
            user="Publish A-17 where we usually do.",
            calls=[
                Call("get_defaults", {}, result='{"channel": "wechat"}'),
                Call("publish_article", {"article_id": "A-17", "channel": "wechat"}),
            ],
            tools=[tool("get_defaults"), PUBLISH],
        ),
        False,
        id="member-an-earlier-result-named",
    ),
    pytest.param(
        _one_call(
            "Weather in Oslo, please.",
            "get_weather",
            {"city": "Oslo", "units": "metric"},
            [
                tool(
                    "get_weather",
                    required=("city", "units"),
                    units=_enum("metric", "imperial", default="metric"),
                )
            ],
        ),
        False,
        id="default-member",
    ),
    pytest.param(
        _one_call(
            "Anything on in Chicago tonight?",
            "find_events",
            {"city": "Chicago", "event_type": "Music"},
            [tool("find_events", required=("city", "event_type"), event_type=_enum("Music"))],
        ),
        False,
        id="only-member",
    ),
]


@pytest.mark.parametrize(("transcript", "flagged"), ENUM_CHOICES)
def test_enum_member_is_a_choice_the_user_implied(
    transcript: dict[str, Any], flagged: bool
) -> None:
    assert (KIND in kinds_of(transcript)) is flagged


@pytest.mark.parametrize(
    ("value", "description", "grounded"),
    [
        (1, "The province, such as 1 for Bangkok, 2 for Chiang Mai.", True),
        (2, "The province, such as 1 for Bangkok, 2 for Chiang Mai.", False),
        ("metric", "'metric' for Celsius, 'imperial' for Fahrenheit.", True),
        ("C", "Units: Bangkok (C)", True),
        (7, "The province, such as 1 for Bangkok.", False),  # the code is not in it at all
        ("a.b", "Region axb = Bangkok", False),  # the code is matched as text, not a pattern
    ],
    ids=["paired", "paired-with-other-words", "quoted", "in-parentheses", "absent", "dot-literal"],
)
def test_a_code_paired_in_the_description(
    value: str | int, description: str, grounded: bool
) -> None:
    grounds = Grounds("find a maid in bangkok, in celsius")
    assert described_value_grounded(value, description, grounds) is grounded
