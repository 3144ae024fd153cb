"""Multi-agent traffic: the team's own names and the task's own world are no inventions.

An orchestrator's plans and progress notes name its helpers (the agents it is offered as
tools, the members of its group chat), restate what the request says happened, and list
the sources the request prescribed. None of that is a claim the trace can refute. Each
table has its look-alike that must still be caught: an invented helper, a report of work
no tool did, a cited page nobody fetched or prescribed.
"""

from __future__ import annotations

import pytest

from factledger.processors.model import ToolCall, ToolDefinition, Turn
from factledger.processors.runner import default_runner

_REQUEST = {"type": "object", "properties": {"request": {"type": "string"}}}
TEAM = ("WebSurfer", "Coder", "FileSurfer", "ComputerTerminal")
TEAM_TOOLS = tuple(ToolDefinition(name, _REQUEST) for name in TEAM)
ORCHESTRATOR = "MagenticOneOrchestrator"


def orchestrator_turn(
    reply: str,
    *,
    user: str = "How many studies on penguins appeared in Nature in 2020?",
    calls: tuple[ToolCall, ...] = (),
    tools: tuple[ToolDefinition, ...] | None = TEAM_TOOLS,
    participants: tuple[str, ...] = (),
) -> Turn:
    return Turn(
        reply=reply,
        user_message=user,
        tool_calls=calls,
        tools=tools,
        agent=ORCHESTRATOR,
        participants=participants,
    )


def kinds(turn: Turn) -> set[str]:
    return set(default_runner().validate(turn).kinds)


def outcome(turn: Turn) -> str:
    return default_runner().validate(turn).outcome.value


SEARCHED = ToolCall(
    "WebSurfer", "c1", {"request": "search Nature for penguin studies"}, result="ok"
)
SEARCH_TOOL = ToolDefinition("search_web", {"type": "object", "properties": {}})


# The roster: offered agents and chat members are grounded names in every kind.
ROSTER_CLEAN = [
    pytest.param(
        orchestrator_turn(
            "Here is the team: WebSurfer, FileSurfer and ComputerTerminal are available; "
            "WebSurfer found the results.",
            calls=(SEARCHED,),
        ),
        id="offered-agents-named-in-a-progress-note",
    ),
    pytest.param(
        orchestrator_turn(
            "The team already has WebSurfer, FileSurfer and ComputerTerminal.",
            tools=(SEARCH_TOOL,),
            calls=(ToolCall("search_web", "c1", {}, result="ok"),),
            participants=(ORCHESTRATOR, *TEAM),
        ),
        id="chat-members-that-are-no-tools",
    ),
    pytest.param(
        orchestrator_turn(
            "- `WebSurfer` searched the archive\n- `FileSurfer` exists for PDFs\n"
            "- `ComputerTerminal` runs the scripts",
            calls=(SEARCHED,),
        ),
        id="backticked-bullets",
    ),
    pytest.param(
        orchestrator_turn(
            "Das Team besteht aus WebSurfer, FileSurfer und ComputerTerminal, die vorhanden sind.",
            calls=(SEARCHED,),
        ),
        id="german",
    ),
    pytest.param(
        orchestrator_turn(
            "The count is 12 (via WebSurfer). I used FileSurfer to read the PDF.",
            tools=(),
            participants=(ORCHESTRATOR, "WebSurfer", "FileSurfer"),
        ),
        id="chat-member-cited-as-a-source",
    ),
]
ROSTER_CAUGHT = [
    pytest.param(
        orchestrator_turn(
            "The team already has DataMiner, ChartPainter and QueryRunner.",
            calls=(SEARCHED,),
            participants=(ORCHESTRATOR, *TEAM),
        ),
        {"confabulated_identifier_set"},
        id="invented-helpers-stay-a-set",
    ),
    pytest.param(
        orchestrator_turn(
            "The count is 12 (via PaperMiner).",
            tools=(),
            participants=(ORCHESTRATOR, "WebSurfer"),
        ),
        {"citation_unregistered_tool"},
        id="cited-helper-that-is-no-member",
    ),
]


@pytest.mark.parametrize("turn", ROSTER_CLEAN)
def test_the_team_roster_is_grounded(turn: Turn) -> None:
    assert kinds(turn) == set()


@pytest.mark.parametrize(("turn", "expected"), ROSTER_CAUGHT)
def test_invented_helpers_are_still_caught(turn: Turn, expected: set[str]) -> None:
    assert expected <= kinds(turn)


def test_a_delegations_request_is_prose_the_agent_composed() -> None:
    call = ToolCall(
        "WebSurfer", "c1", {"request": "open the archive and scroll to 2020"}, result="ok"
    )
    assert "ungrounded_tool_argument" not in kinds(orchestrator_turn("On it.", calls=(call,)))


# The task's world: what the request states happened is not the agent's act.
WORLD_CLEAN = [
    pytest.param(
        orchestrator_turn(
            "GIVEN OR VERIFIED FACTS\n- the word that was removed from the archived article",
            user="In the archived article a word was removed. Which word was removed?",
        ),
        id="request-event-restated-in-a-fact-sheet",
    ),
    pytest.param(
        orchestrator_turn(
            "We know the paper about penguins was published, so the journal must be found.",
            user="A paper about penguins was published in a journal. Which journal?",
        ),
        id="published-event-of-the-request",
    ),
    pytest.param(
        orchestrator_turn(
            'The task says "the archived article was edited", so WebSurfer must find the edit.',
            user="An archived article about penguins was edited in March. What changed?",
        ),
        id="quoted-restatement",
    ),
]
WORLD_CAUGHT = [
    pytest.param(
        orchestrator_turn(
            "The draft has been published to the blog.",
            user="A paper about penguins was published in a journal. Which journal?",
        ),
        id="same-verb-other-object",
    ),
    pytest.param(
        orchestrator_turn(
            "The ticket was deleted.",
            user="Please delete the ticket about penguins.",
        ),
        id="request-asks-for-the-act-it-does-not-state-it",
    ),
]


@pytest.mark.parametrize("turn", WORLD_CLEAN)
def test_the_requests_own_events_are_not_claims(turn: Turn) -> None:
    assert "claim_without_tool" not in kinds(turn)


@pytest.mark.parametrize("turn", WORLD_CAUGHT)
def test_claims_beside_the_requests_events_still_count(turn: Turn) -> None:
    assert "claim_without_tool" in kinds(turn)


# Plans in the perfect tense: the future frame of a list's header governs its items.
PLAN_CLEAN = [
    pytest.param(
        "Once done we will have:\n- Confirmed the dates\n- Verified the counts", id="will"
    ),
    pytest.param("After these steps, we’ll have verified the counts.", id="curly-apostrophe"),
    pytest.param("Once finished, we'll have:\n* Confirmed the dates\n* Verified them", id="stars"),
    pytest.param("Plan:\n1. Confirmed list of studies\n2. Verified counts", id="plan-header"),
    pytest.param("Am Ende werden wir:\n- die Daten bestätigt haben", id="german-header"),
    pytest.param("We won’t have verified the counts until WebSurfer reports.", id="won-t"),
]
PLAN_CAUGHT = [
    pytest.param("We have:\n- Confirmed the dates\n- Verified the counts", id="report-list"),
    pytest.param("Progress so far:\n- Confirmed the dates", id="progress-list"),
    pytest.param("I have verified the counts and confirmed the dates.", id="past-report"),
]


@pytest.mark.parametrize("reply", PLAN_CLEAN)
def test_plans_in_the_perfect_tense_are_not_reports(reply: str) -> None:
    assert "claim_without_tool" not in kinds(orchestrator_turn(reply))


@pytest.mark.parametrize("reply", PLAN_CAUGHT)
def test_reports_without_a_tool_still_reject(reply: str) -> None:
    assert outcome(orchestrator_turn(reply)) == "reject"


# A delegation is the action: handing the steps over backs "initiated".
def test_steps_initiated_by_a_delegation_of_the_turn() -> None:
    turn = orchestrator_turn(
        "Steps identified and initiated.", calls=(SEARCHED,), participants=(ORCHESTRATOR, *TEAM)
    )
    assert "claim_without_tool" not in kinds(turn)


def test_delegation_to_a_chat_member_that_is_no_tool() -> None:
    turn = orchestrator_turn(
        "Task delegated and started.",
        tools=None,
        calls=(ToolCall("Coder", "c1", {"request": "write the script"}, result="ok"),),
        participants=(ORCHESTRATOR, *TEAM),
    )
    assert "claim_without_tool" not in kinds(turn)


@pytest.mark.parametrize(
    "calls",
    [
        pytest.param((), id="no-call"),
        pytest.param(
            (ToolCall("get_weather", "c1", {}, result="ok"),), id="a-named-tool-is-no-delegation"
        ),
    ],
)
def test_initiated_without_a_delegation_still_rejects(calls: tuple[ToolCall, ...]) -> None:
    tools = (ToolDefinition("get_weather"),)
    turn = orchestrator_turn("Steps identified and initiated.", calls=calls, tools=tools)
    assert "claim_without_tool" in kinds(turn)


# Prescribed sources and instructions: a URL to use is not a URL cited.
PRESCRIBED = "https://data.census.gov/table/ABC123"
SOURCE_CLEAN = [
    pytest.param(
        f"Plan:\n1. Look up the population on {PRESCRIBED}\nSources to consult: {PRESCRIBED}",
        f"Use {PRESCRIBED} to find the population.",
        id="prescribed-source-listed-to-look-up",
    ),
    pytest.param(
        "Next, WebSurfer should type https://www.bls.gov/data/tables/x into the search bar.",
        "What does the BLS table say?",
        id="typed-into-the-search-bar",
    ),
    pytest.param(
        "Please navigate to https://www.bls.gov/data/tables/x and read the table (see the header).",
        "What does the BLS table say?",
        id="navigate-to",
    ),
    pytest.param(
        f"Zu prüfen (siehe {PRESCRIBED}): die Bevölkerung.",
        f"Nutze {PRESCRIBED} für die Bevölkerung.",
        id="german-prescribed",
    ),
]
SOURCE_CAUGHT = [
    pytest.param(
        "The population is 4,201. Sources: https://www.census.gov/other/table/Z9",
        f"Use {PRESCRIBED} to find the population.",
        id="cited-page-not-prescribed",
    ),
    pytest.param(
        f"The population is 4,201, according to {PRESCRIBED}.",
        f"Use {PRESCRIBED} to find the population.",
        id="prescribed-page-cited-as-read",
    ),
    pytest.param(
        f"The Pro plan costs $24 per seat, according to {PRESCRIBED}.",
        f"Use {PRESCRIBED} as the source.",
        id="plan-as-a-word-of-the-statement",
    ),
]


@pytest.mark.parametrize(("reply", "user"), SOURCE_CLEAN)
def test_prescribed_sources_and_instructions_are_not_citations(reply: str, user: str) -> None:
    assert "unfetched_citation" not in kinds(orchestrator_turn(reply, user=user))


@pytest.mark.parametrize(("reply", "user"), SOURCE_CAUGHT)
def test_unfetched_citations_still_reject(reply: str, user: str) -> None:
    assert outcome(orchestrator_turn(reply, user=user)) == "reject"


# Single shapes: a compound noun is no name, an e-mail address gives its owner's name.
def test_file_path_is_no_file_named_path() -> None:
    call = ToolCall("FileSurfer", "c1", {"request": "open it"}, result="path: /data/report.pdf")
    turn = orchestrator_turn("The file path is not available yet.", calls=(call,))
    assert "negated_existing_identifier" not in kinds(turn)


def test_a_named_file_reported_missing_still_drifts() -> None:
    call = ToolCall("FileSurfer", "c1", {"request": "list"}, result="report.txt\nnotes.txt")
    turn = orchestrator_turn("The file notes.txt does not exist.", calls=(call,))
    assert "negated_existing_identifier" in kinds(turn)


FIND_USER = ToolDefinition(
    "find_user_id_by_name",
    {
        "type": "object",
        "properties": {"first_name": {"type": "string"}, "last_name": {"type": "string"}},
        "required": ["first_name", "last_name"],
    },
)


@pytest.mark.parametrize(
    ("address", "first", "last"),
    [
        pytest.param("john.smith@example.com", "John", "Smith", id="dotted"),
        pytest.param("mei_lin-chen@example.org", "Mei", "Chen", id="underscore-and-hyphen"),
    ],
)
def test_a_name_in_the_users_email_address_is_given(address: str, first: str, last: str) -> None:
    turn = Turn(
        reply="Found you.",
        user_message=f"My e-mail is {address}, look up my account.",
        tools=(FIND_USER,),
        tool_calls=(
            ToolCall(FIND_USER.name, "c1", {"first_name": first, "last_name": last}, result="{}"),
        ),
    )
    assert "ungrounded_tool_argument" not in kinds(turn)


def test_a_name_nowhere_in_the_address_is_still_invented() -> None:
    turn = Turn(
        reply="Found you.",
        user_message="My e-mail is john.smith@example.com, look up my account.",
        tools=(FIND_USER,),
        tool_calls=(
            ToolCall(
                FIND_USER.name, "c1", {"first_name": "Peter", "last_name": "Miller"}, result="{}"
            ),
        ),
    )
    assert "ungrounded_tool_argument" in kinds(turn)
