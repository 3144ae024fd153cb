"""The turn's own trace as a source of truth: which listings, searches and reads settle
which path and symbol subjects, and which never may."""

from __future__ import annotations

import json
from typing import Any

import pytest

from factledger.processors.model import ToolCall, Turn
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
    VerificationOutcome,
)
from factledger.processors.verification.trace_source import TraceVerifier

CONFIRMED = VerificationOutcome.CONFIRMED
REFUTED = VerificationOutcome.REFUTED
LISTED = ("test_a.py", "test_b.py", "test_c.py")


def call(name: str, arguments: dict[str, Any], result: str | None, **kw: Any) -> ToolCall:
    return ToolCall(
        name=name,
        call_id=kw.pop("call_id", "call_1"),
        arguments=arguments,
        arguments_text=json.dumps(arguments),
        result=result,
        **kw,
    )


def ask(
    name: str, *calls: ToolCall, kind: SubjectKind = SubjectKind.PATH, absent: bool = False
) -> Verification | None:
    turn = Turn(reply=f"See {name}.", tool_calls=calls)
    return TraceVerifier().verify(Subject(kind, name, claimed_absent=absent), turn, 5.0)


def outcome(name: str, *calls: ToolCall, **kw: Any) -> VerificationOutcome | None:
    found = ask(name, *calls, **kw)
    return None if found is None else found.outcome


def shell(command: str, result: str) -> ToolCall:
    return call("bash", {"command": command}, result)


# --- each result shape of a listing of tests/ ---------------------------------------------

SHAPES = {
    "json-names": json.dumps(list(LISTED)),
    "json-paths": json.dumps([f"tests/{n}" for n in LISTED]),
    "json-objects": json.dumps([{"name": n, "type": "file"} for n in LISTED]),
    "json-objects-is-dir": json.dumps(
        [{"path": f"tests/{n}", "is_dir": False} for n in LISTED]
        + [{"path": "tests/sub", "is_dir": True}]
    ),
    "json-files-key": json.dumps({"path": "tests", "files": list(LISTED), "has_more": False}),
    "json-entries-key": json.dumps({"entries": [{"name": n} for n in LISTED]}),
    "mcp-content-blocks": json.dumps(
        {"content": [{"type": "text", "text": "\n".join(f"[FILE] {n}" for n in LISTED)}]}
    ),
    "mcp-lines": "\n".join(f"[FILE] {n}" for n in LISTED) + "\n[DIR] sub",
    "mcp-with-sizes": "\n".join(f"[FILE] {n}        1.20 KB" for n in LISTED)
    + "\n\nTotal: 3 files, 0 directories\nCombined size: 3.6 KB",
    "plain-names": "\n".join(LISTED) + "\n",
    "plain-paths": "\n".join(f"tests/{n}" for n in LISTED),
    "dot-slash-paths": "\n".join(f"./{n}" for n in LISTED),
    "with-header": "Contents of tests/:\n" + "\n".join(LISTED),
    "ls-l": "total 12\n"
    + "\n".join(f"-rw-r--r--  1 dev staff  120 Jan  3 12:00 {n}" for n in LISTED)
    + "\ndrwxr-xr-x  2 dev staff   64 Jan  3 12:00 sub",
}


@pytest.mark.parametrize("result", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("tool", ["list_files", "list_dir", "mcp__filesystem__list_directory"])
def test_a_listed_name_is_refuted_and_an_unlisted_one_confirmed(tool: str, result: str) -> None:
    listing = call(tool, {"path": "tests"}, result)
    assert outcome("tests/test_b.py", listing) is REFUTED
    assert outcome("tests/test_cache.py", listing) is CONFIRMED
    assert outcome("./tests/test_cache.py", listing) is CONFIRMED


@pytest.mark.parametrize(
    ("command", "result"),
    [
        pytest.param("ls tests", "test_a.py\ntest_b.py\ntest_c.py\n", id="ls"),
        pytest.param("ls -la tests", SHAPES["ls-l"], id="ls-la"),
        pytest.param("ls -1F tests", "test_a.py\ntest_b.py*\ntest_c.py\nsub/\n", id="ls-F"),
        pytest.param("find tests", "tests\ntests/test_a.py\ntests/test_b.py\ntests/c", id="find"),
        pytest.param("find ./tests -type f", "./tests/test_a.py\n./tests/test_b.py", id="find-f"),
        pytest.param(
            "tree tests",
            "tests\n├── test_a.py\n├── test_b.py\n└── sub\n    └── test_d.py\n\n"
            "1 directory, 3 files",
            id="tree",
        ),
        pytest.param(
            "tree tests",
            "tests\n|-- test_a.py\n|-- test_b.py\n`-- sub\n    `-- test_d.py\n",
            id="tree-ascii",
        ),
    ],
)
def test_shell_listings_settle_like_listing_tools(command: str, result: str) -> None:
    listing = shell(command, result)
    assert outcome("tests/test_b.py", listing) is REFUTED
    assert outcome("tests/test_cache.py", listing) is CONFIRMED


def test_tree_output_reaches_every_level() -> None:
    listing = shell("tree tests", "tests\n├── a.py\n└── sub\n    └── deep\n        └── x.py\n")
    assert outcome("tests/sub/deep/x.py", listing) is REFUTED
    assert outcome("tests/sub/deep/y.py", listing) is CONFIRMED
    assert outcome("tests/sub/deep/", listing) is REFUTED


def test_mcp_directory_tree_json() -> None:
    tree = [
        {"name": "a.py", "type": "file"},
        {"name": "sub", "type": "directory", "children": [{"name": "x.py", "type": "file"}]},
    ]
    listing = call("directory_tree", {"path": "tests"}, json.dumps(tree))
    assert outcome("tests/sub/x.py", listing) is REFUTED
    assert outcome("tests/sub/y.py", listing) is CONFIRMED
    assert outcome("tests/other/y.py", listing) is CONFIRMED


# --- incomplete listings never confirm ----------------------------------------------------

TRUNCATED = {
    "ellipsis": "test_a.py\ntest_b.py\n...",
    "unicode-ellipsis": "test_a.py\ntest_b.py\n…",
    "truncated-word": "test_a.py\ntest_b.py\n[output truncated]",
    "and-n-more": "test_a.py\ntest_b.py\n(and 40 more)",
    "more-files": "test_a.py\ntest_b.py\n12 more files not shown",
    "showing-n-of-m": "Showing 2 of 40 entries\ntest_a.py\ntest_b.py",
    "limit-reached": "test_a.py\ntest_b.py\nlimit reached",
    "output-too-long": "test_a.py\ntest_b.py\nOutput too long, narrow the path",
    "has-more": json.dumps({"files": ["test_a.py", "test_b.py"], "has_more": True}),
    "next-cursor": json.dumps({"files": ["test_a.py", "test_b.py"], "next_cursor": "abc"}),
    "next-page-token": json.dumps({"items": ["test_a.py", "test_b.py"], "nextPageToken": "x"}),
    "cursor-in-text": "test_a.py\ntest_b.py\nnext_cursor: eyJvIjoyfQ",
    "total-above-count": json.dumps({"files": ["test_a.py", "test_b.py"], "total": 9}),
    "prose-line": "test_a.py\ntest_b.py\nsome files were skipped by the ignore rules",
}


@pytest.mark.parametrize("result", TRUNCATED.values(), ids=TRUNCATED.keys())
def test_a_truncated_listing_refutes_but_never_confirms(result: str) -> None:
    listing = call("list_files", {"path": "tests"}, result)
    assert outcome("tests/test_a.py", listing) is REFUTED
    assert ask("tests/test_cache.py", listing) is None


def test_showing_all_of_them_is_complete() -> None:
    listing = call("list_files", {"path": "tests"}, "Showing 2 of 2\ntest_a.py\ntest_b.py")
    assert outcome("tests/test_cache.py", listing) is CONFIRMED


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({"limit": 2}, id="limit-equals-count"),
        pytest.param({"max_results": 2}, id="max-results"),
        pytest.param({"head_limit": 1}, id="head-limit-below-count"),
        pytest.param({"page": 2}, id="a-later-page"),
        pytest.param({"offset": 50}, id="offset"),
        pytest.param({"cursor": "abc"}, id="cursor-argument"),
    ],
)
def test_a_paged_listing_never_confirms(arguments: dict[str, Any]) -> None:
    listing = call("list_files", {"path": "tests", **arguments}, "test_a.py\ntest_b.py")
    assert ask("tests/test_cache.py", listing) is None


def test_a_limit_above_the_count_is_complete() -> None:
    listing = call("list_files", {"path": "tests", "limit": 100}, "test_a.py\ntest_b.py")
    assert outcome("tests/test_cache.py", listing) is CONFIRMED


@pytest.mark.parametrize(
    "listing",
    [
        pytest.param(call("list_files", {"path": "tests"}, "test_a.py", error=True), id="error"),
        pytest.param(
            call("list_files", {"path": "tests"}, "Error: No such file or directory"),
            id="no-such-file",
        ),
        pytest.param(
            shell("ls tests", "ls: cannot access 'tests': No such file or directory"),
            id="ls-cannot-access",
        ),
        pytest.param(
            call("list_files", {"path": "tests"}, "permission denied: tests"),
            id="permission-denied",
        ),
        pytest.param(call("list_files", {"path": "tests"}, None), id="no-result"),
        pytest.param(call("list_files", {"path": "tests"}, ""), id="empty-result"),
        pytest.param(
            call("list_files", {"path": "tests"}, json.dumps({"error": "ENOENT"})),
            id="error-payload",
        ),
    ],
)
def test_a_failed_listing_settles_nothing(listing: ToolCall) -> None:
    assert ask("tests/test_cache.py", listing) is None
    assert ask("tests/test_a.py", listing) is None


# --- scope: directory, depth, pattern -----------------------------------------------------


def test_entries_only_some_of_which_repeat_the_directory_confirm_nothing() -> None:
    # `tests/test_b.py` in a listing of tests/ beside bare names could be tests/tests/...
    listing = call("list_files", {"path": "tests"}, "test_a.py\ntests/test_b.py")
    assert outcome("tests/test_b.py", listing) is REFUTED
    assert ask("tests/test_cache.py", listing) is None


def test_a_listing_of_another_directory_says_nothing() -> None:
    listing = call("list_files", {"path": "src"}, "app.py\ncache.py")
    assert ask("tests/test_cache.py", listing) is None
    assert ask("srcx/app.py", listing) is None


def test_a_listing_without_a_directory_is_of_the_root() -> None:
    listing = call("list_files", {}, "README.md\nsrc/\ntests/")
    assert outcome("tests/", listing) is REFUTED
    assert outcome("docs/index.md", listing) is CONFIRMED  # no docs/ at the root
    assert ask("tests/test_cache.py", listing) is None  # tests/ is listed, not its content


@pytest.mark.parametrize(
    "listing",
    [
        pytest.param(call("list_dir", {"path": "tests"}, "test_a.py\nsub/"), id="non-recursive"),
        pytest.param(shell("ls tests", "test_a.py\nsub"), id="ls"),
        pytest.param(shell("find tests -maxdepth 1", "tests\ntests/a.py\ntests/sub"), id="find-1"),
        pytest.param(shell("tree -L 1 tests", "tests\n├── test_a.py\n└── sub\n"), id="tree-L1"),
    ],
)
def test_a_one_level_listing_settles_deeper_names_only_through_their_directory(
    listing: ToolCall,
) -> None:
    assert ask("tests/sub/x.py", listing) is None  # sub/ is there: what it holds is not shown
    assert outcome("tests/other/x.py", listing) is CONFIRMED  # no other/: nothing under it
    assert outcome("tests/sub/", listing) is REFUTED


def test_a_listing_that_shows_two_levels_says_nothing_of_the_third() -> None:
    listing = call("list_files", {"path": "tests"}, "a.py\nsub/\nsub/x.py\nsub/deep/")
    assert outcome("tests/sub/y.py", listing) is CONFIRMED
    assert ask("tests/sub/deep/z.py", listing) is None


@pytest.mark.parametrize(
    "listing",
    [
        pytest.param(
            call("list_files", {"path": "tests", "recursive": True}, "a.py\nsub/x.py"),
            id="recursive-argument",
        ),
        pytest.param(
            shell("find tests", "tests\ntests/a.py\ntests/sub\ntests/sub/x.py"), id="find"
        ),
    ],
)
def test_a_recursive_listing_settles_any_depth(listing: ToolCall) -> None:
    assert outcome("tests/sub/x.py", listing) is REFUTED
    assert outcome("tests/sub/y.py", listing) is CONFIRMED
    assert outcome("tests/sub/deeper/z.py", listing) is CONFIRMED


def test_a_file_has_nothing_under_it() -> None:
    listing = call("list_dir", {"path": "src"}, json.dumps([{"name": "app.py", "type": "file"}]))
    assert outcome("src/app.py/handlers.py", listing) is CONFIRMED


@pytest.mark.parametrize(
    ("arguments", "inside", "outside"),
    [
        pytest.param(
            {"pattern": "tests/*.py"}, "tests/test_cache.py", "tests/fixtures.json", id="star"
        ),
        pytest.param(
            {"pattern": "*.py", "path": "tests"},
            "tests/test_cache.py",
            "tests/sub/test_x.py",
            id="star-stays-in-its-directory",
        ),
        pytest.param(
            {"pattern": "tests/**/*.py"}, "tests/sub/test_x.py", "tests/data.json", id="globstar"
        ),
    ],
)
def test_a_glob_settles_only_the_names_it_matches(
    arguments: dict[str, Any], inside: str, outside: str
) -> None:
    listing = call("glob", arguments, "tests/test_a.py\ntests/test_b.py")
    assert outcome(inside, listing) is CONFIRMED
    assert ask(outside, listing) is None
    assert outcome("tests/test_a.py", listing) is REFUTED


def test_a_glob_with_braces_confirms_nothing() -> None:
    listing = call("glob", {"pattern": "tests/*.{py,js}"}, "tests/test_a.py")
    assert ask("tests/test_cache.py", listing) is None
    assert outcome("tests/test_a.py", listing) is REFUTED


def test_find_name_settles_matching_names_at_any_depth() -> None:
    listing = shell("find tests -name '*.py'", "tests/test_a.py\ntests/sub/test_b.py")
    assert outcome("tests/sub/test_c.py", listing) is CONFIRMED
    assert ask("tests/sub/data.json", listing) is None


def test_a_files_only_listing_does_not_confirm_a_directory() -> None:
    listing = shell("find tests -type f", "tests/test_a.py\ntests/sub/test_b.py")
    assert ask("tests/fixtures/", listing) is None
    assert outcome("tests/fixtures/data.json", listing) is CONFIRMED
    assert outcome("tests/sub/", listing) is REFUTED


@pytest.mark.parametrize(
    ("name", "directory"),
    [("config/.env", "config"), ("tests/.hidden.py", "tests"), ("node_modules/x/index.js", ".")],
)
def test_names_a_listing_may_hide_need_an_unfiltered_listing(name: str, directory: str) -> None:
    entries = "test_a.py\nsrc/"
    assert ask(name, call("list_files", {"path": directory}, entries)) is None
    assert outcome(name, shell(f"ls -A {directory}", entries)) is CONFIRMED


# --- names as the reply writes them -------------------------------------------------------


def test_a_trailing_slash_names_a_directory() -> None:
    listing = call("list_dir", {"path": "src/"}, "[DIR] cache\n[FILE] app.py")
    assert outcome("src/cache/", listing) is REFUTED
    assert outcome("./src/cache/", listing) is REFUTED
    assert outcome("src/tools/", listing) is CONFIRMED


def test_names_are_case_sensitive() -> None:
    listing = call("list_dir", {"path": "src"}, "App.py")
    assert outcome("src/app.py", listing) is CONFIRMED


def test_a_bare_file_name_is_not_settled_absent_by_one_directory() -> None:
    listing = call("list_files", {"path": "tests"}, "test_a.py\ntest_b.py")
    assert ask("test_cache.py", listing) is None
    assert outcome("test_a.py", listing) is REFUTED  # a file of that name exists


def test_a_bare_file_name_is_settled_absent_by_a_recursive_root_listing() -> None:
    listing = shell("find .", ".\n./README.md\n./tests\n./tests/test_a.py")
    assert outcome("test_cache.py", listing) is CONFIRMED
    assert outcome("test_a.py", listing) is REFUTED


def test_paths_out_of_the_root_are_never_settled() -> None:
    listing = call("list_files", {"path": "."}, "a.py")
    assert ask("../secrets/a.py", listing) is None
    assert ask("~/notes.txt", listing) is None


def test_absolute_entries_under_a_relative_directory_settle_nothing() -> None:
    listing = call("list_files", {"path": "tests"}, "/home/dev/repo/tests/test_a.py")
    assert ask("tests/test_cache.py", listing) is None


def test_absolute_listing_settles_absolute_names() -> None:
    listing = call("LS", {"path": "/repo/tests"}, "/repo/tests/test_a.py\n/repo/tests/test_b.py")
    assert outcome("/repo/tests/test_a.py", listing) is REFUTED
    assert outcome("/repo/tests/test_z.py", listing) is CONFIRMED
    assert ask("tests/test_z.py", listing) is None


def test_a_claimed_absent_name_that_a_listing_shows_is_confirmed() -> None:
    listing = call("list_files", {"path": "tests"}, "test_a.py\ntest_b.py")
    assert outcome("tests/test_a.py", listing, absent=True) is CONFIRMED
    assert outcome("tests/test_cache.py", listing, absent=True) is REFUTED


# --- searches and reads -------------------------------------------------------------------


@pytest.mark.parametrize(
    "search",
    [
        pytest.param(
            call("grep", {"pattern": "cache", "path": "."}, "tests/test_cache.py:3:import cache"),
            id="grep-lines",
        ),
        pytest.param(
            call("search_files", {"query": "cache"}, json.dumps([{"path": "tests/test_cache.py"}])),
            id="json-matches",
        ),
        pytest.param(shell("grep -rl cache tests", "tests/test_cache.py\n"), id="shell-grep"),
        pytest.param(
            call("Grep", {"pattern": "cache", "path": "tests"}, "test_cache.py:3:import cache"),
            id="relative-to-searched-directory",
        ),
    ],
)
def test_a_search_shows_the_files_it_names_and_never_an_absence(search: ToolCall) -> None:
    assert outcome("tests/test_cache.py", search) is REFUTED
    assert ask("tests/test_other.py", search) is None


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(call("read_file", {"path": "src/cache.py"}, "def build(): ...\n"), id="tool"),
        pytest.param(
            call("Read", {"file_path": "./src/cache.py", "offset": 10}, "  10→def build():"),
            id="partial-with-gutter",
        ),
        pytest.param(shell("cat src/cache.py", "def build(): ...\n"), id="cat"),
        pytest.param(
            call("str_replace_editor", {"command": "view", "path": "src/cache.py"}, "def build():"),
            id="editor-view",
        ),
    ],
)
def test_a_read_shows_its_file_and_what_it_defines(read: ToolCall) -> None:
    assert outcome("src/cache.py", read) is REFUTED
    assert outcome("build", read, kind=SubjectKind.SYMBOL) is REFUTED
    assert outcome("build()", read, kind=SubjectKind.SYMBOL) is REFUTED
    assert ask("evict", read, kind=SubjectKind.SYMBOL) is None  # never shown absent
    assert ask("src/other.py", read) is None


@pytest.mark.parametrize(
    ("text", "symbol"),
    [
        ("class LruCache:\n    pass", "LruCache"),
        ("export function loadConfig() {}", "loadConfig"),
        ("export const DEFAULT_TTL = 30", "DEFAULT_TTL"),
        ("MAX_SIZE: int = 10", "MAX_SIZE"),
        ("async def fetch_all():", "fetch_all"),
        ("func (c *Cache) Evict() {}", "Evict"),
        ("class Cache:\n    def get(self, key):", "Cache.get"),
    ],
)
def test_definition_shapes(text: str, symbol: str) -> None:
    read = call("read_file", {"path": "src/lib.py"}, text)
    assert outcome(symbol, read, kind=SubjectKind.SYMBOL) is REFUTED


def test_a_mention_is_no_definition() -> None:
    read = call("read_file", {"path": "src/lib.py"}, "from x import build\nbuild()\nif build == 1:")
    assert ask("build", read, kind=SubjectKind.SYMBOL) is None
    other = call("read_file", {"path": "a.py"}, "def get(): ...")
    assert ask("Other.get", other, kind=SubjectKind.SYMBOL) is None


def test_a_test_id_needs_the_definition_in_that_file() -> None:
    read = call("read_file", {"path": "tests/test_a.py"}, "def test_one():\n    assert 1")
    assert outcome("tests/test_a.py::test_one", read, kind=SubjectKind.SYMBOL) is REFUTED
    assert ask("tests/test_b.py::test_one", read, kind=SubjectKind.SYMBOL) is None


def test_a_failed_read_shows_nothing() -> None:
    read = call("read_file", {"path": "src/cache.py"}, "Error: file not found: src/cache.py")
    assert ask("src/cache.py", read) is None


# --- the trace, its order and its evidence ------------------------------------------------


def test_a_later_change_voids_the_listing() -> None:
    listing = call("list_files", {"path": "tests"}, "test_a.py", call_id="c1")
    write = call("write_file", {"path": "tests/test_cache.py", "content": "x"}, "ok", call_id="c2")
    assert ask("tests/test_cache.py", listing, write) is None
    assert outcome("tests/test_cache.py", write, listing) is CONFIRMED  # listed after the write


def test_a_shell_command_that_is_no_listing_is_a_change() -> None:
    listing = call("list_files", {"path": "tests"}, "test_a.py", call_id="c1")
    run = shell("python make_tests.py && ls tests", "test_a.py\ntest_cache.py")
    assert ask("tests/test_cache.py", listing, run) is None


def test_earlier_turns_are_not_read() -> None:
    listing = call("list_files", {"path": "tests"}, "test_a.py")
    turn = Turn(reply="x", history_tool_calls=(listing,))
    subject = Subject(SubjectKind.PATH, "tests/test_cache.py")
    assert TraceVerifier().verify(subject, turn, 5.0) is None


def test_other_subject_kinds_are_not_its_to_answer() -> None:
    listing = call("list_files", {"path": "."}, "a.py")
    for kind in (SubjectKind.COMMIT, SubjectKind.URL, SubjectKind.REF, SubjectKind.RECORD):
        assert ask("abc1234", listing, kind=kind) is None


def test_the_evidence_names_the_call_the_question_and_the_answer() -> None:
    listing = call("list_files", {"path": "tests"}, "\n".join(LISTED), call_id="call_2")
    found = ask("tests/test_cache.py", listing)
    assert found is not None
    assert found.source == "trace:list_files (call_2)"
    assert found.query == 'list_files({"path": "tests"})'
    assert found.answer == "listing of tests/ (3 entries, depth 1, complete) has no test_cache.py"
    assert found.checked_at > 0 and found.duration_ms >= 0
    assert not found.retryable
    shown = ask("tests/test_a.py", listing)
    assert shown is not None and shown.answer == "listing of tests/ shows tests/test_a.py"


def test_the_query_is_bounded() -> None:
    listing = call("list_files", {"path": "tests", "note": "x" * 5000}, "test_a.py")
    found = ask("tests/test_a.py", listing)
    assert found is not None and len(found.query) <= 300


def test_a_turn_listing_tests_and_naming_seven_files() -> None:
    listing = call("list_files", {"path": "tests"}, "\n".join(LISTED), call_id="call_1")
    invented = ("test_cache.py", "test_memory.py", "test_registry.py", "test_tools.py")
    names = [f"tests/{n}" for n in (*LISTED, *invented)]
    turn = Turn(
        reply="The tests are " + ", ".join(names) + ".",
        tool_calls=(listing,),
    )
    verifier = TraceVerifier()
    outcomes = {
        name: verifier.verify(Subject(SubjectKind.PATH, name, finding=0), turn, 5.0)
        for name in names
    }
    confirmed = sorted(n for n, v in outcomes.items() if v and v.outcome is CONFIRMED)
    refuted = sorted(n for n, v in outcomes.items() if v and v.outcome is REFUTED)
    assert confirmed == sorted(f"tests/{n}" for n in invented)
    assert refuted == sorted(f"tests/{n}" for n in LISTED)


def test_an_answer_slower_than_the_timeout_is_unverifiable_and_retryable() -> None:
    listing = call("list_files", {"path": "tests"}, "test_a.py")
    turn = Turn(reply="x", tool_calls=(listing,))
    found = TraceVerifier().verify(Subject(SubjectKind.PATH, "tests/test_b.py"), turn, 0.0)
    assert found is not None
    assert found.outcome is VerificationOutcome.UNVERIFIABLE
    assert found.retryable and found.reason == "timeout"


def test_a_change_in_the_same_step_voids_the_listing() -> None:
    listing = call("list_files", {"path": "tests"}, "test_a.py", call_id="c1", step=0)
    write = call("edit_file", {"path": "tests/test_b.py"}, "ok", call_id="c2", step=0)
    turn = Turn(reply="x", tool_calls=(write, listing), steps=("",))
    subject = Subject(SubjectKind.PATH, "tests/test_b.py")
    assert TraceVerifier().verify(subject, turn, 5.0) is None
