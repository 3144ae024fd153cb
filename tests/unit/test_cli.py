"""factledger.cli: `factledger check` and `factledger eval`."""

from __future__ import annotations

import argparse
import json
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from factledger.cli import _parser, main

SHA = "3f9a1c2e7b4d5a6c8e9f0a1b2c3d4e5f6a7b8c9d"


def messages(reply: str, user: str = "What is the latest commit?") -> list[dict[str, Any]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]


FABRICATED = {"model": "m", "tools": [], "messages": messages(f"The latest commit is {SHA}.")}
CLEAN = {"model": "m", "tools": [], "messages": messages("I have not looked it up yet.")}


def write_json(tmp_path: Path, data: Any, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_cases(tmp_path: Path, records: list[Any]) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("factledger: ")
    return lines[0]


# --- check ---------------------------------------------------------------------------------


def test_check_prints_verdict_marked_reply_and_numbered_findings(tmp_path, capsys):
    assert main(["check", str(write_json(tmp_path, FABRICATED))]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "verdict: reject"
    assert lines[2:4] == ["reply:", f"  The latest commit is [[{SHA}]][1]."]
    assert f"  [1] reject fabricated_identifier `{SHA}` @21-61:" in out
    assert "\x1b[" not in out, "no colours into a pipe"


def test_check_keeps_the_nudge_behind_a_flag(tmp_path, capsys):
    path = str(write_json(tmp_path, FABRICATED))
    assert main(["check", path]) == 0
    out = capsys.readouterr().out
    assert "[FACTLEDGER SELF-CORRECTION" not in out
    assert "--nudge" in out
    assert main(["check", "--nudge", path]) == 0
    assert "self-correction nudge:\n[FACTLEDGER SELF-CORRECTION" in capsys.readouterr().out


def test_check_colours_the_marks_when_asked(tmp_path, capsys):
    assert main(["check", "--color", "always", str(write_json(tmp_path, FABRICATED))]) == 0
    out = capsys.readouterr().out
    assert f"\x1b[1;4;31m{SHA}\x1b[0m" in out
    assert "[[" not in out


def test_check_colours_the_marks_on_a_terminal(tmp_path):
    """The real command on a pseudo-terminal: ANSI marks without being asked."""
    path = write_json(tmp_path, FABRICATED)
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm"}
    with subprocess.Popen(
        [sys.executable, "-m", "factledger.cli", "check", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    ) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the command has closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(60) == 0, process.stderr.read() if process.stderr else ""
    os.close(leader)
    out = b"".join(chunks).decode()
    assert f"\x1b[1;4;31m{SHA}\x1b[0m" in out


def test_check_clean_transcript(tmp_path, capsys):
    assert main(["check", str(write_json(tmp_path, CLEAN))]) == 0
    assert capsys.readouterr().out == "verdict: pass\n"


def test_check_json_has_the_documented_keys(tmp_path, capsys):
    assert main(["check", str(write_json(tmp_path, FABRICATED)), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"verdict", "findings", "nudge", "annotated_reply"} <= set(data)
    assert data["verdict"] == "reject"
    (finding,) = data["findings"]
    assert {"kind", "class", "severity", "span", "validator", "token", "message"} <= set(finding)
    assert finding["kind"] == "fabricated_identifier"
    assert finding["class"] == "1"
    assert finding["severity"] == "reject"
    assert finding["span"] == [21, 61]
    assert finding["token"] == SHA
    assert finding["validator"] == "identifiers@1.2"
    assert data["nudge"].startswith("[FACTLEDGER SELF-CORRECTION")
    assert SHA in data["nudge"]
    assert data["annotated_reply"].startswith(f"The latest commit is {SHA}.\n\n⚠️")
    assert data["user_quoted"] == []
    assert "identifiers@1.2" in data["validators"]


def test_check_json_clean(tmp_path, capsys):
    assert main(["check", "--json", str(write_json(tmp_path, CLEAN))]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "pass"
    assert data["findings"] == []
    assert data["nudge"] is None
    assert data["annotated_reply"] == "I have not looked it up yet."


@pytest.mark.parametrize(
    ("settings", "verdict", "kinds"),
    [
        (
            "[validation.severity]\nfabricated_identifier = 'flag'\n",
            "flag",
            ["fabricated_identifier"],
        ),
        ("[validation]\ndisabled_kinds = ['fabricated_identifier']\n", "pass", []),
        ("[validation]\ndisabled_validators = ['identifiers']\n", "pass", []),
    ],
    ids=["severity-override", "disabled-kind", "disabled-validator"],
)
def test_check_honours_config(tmp_path, capsys, settings, verdict, kinds):
    config = tmp_path / "settings.toml"
    config.write_text(settings, encoding="utf-8")
    code = main(["--config", str(config), "check", "--json", str(write_json(tmp_path, FABRICATED))])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == verdict
    assert [f["kind"] for f in data["findings"]] == kinds


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "invalid JSON"),
        ("", "invalid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"messages": []}', "no 'messages'"),
        ('{"messages": [{"role": "robot", "content": "x"}]}', "messages[0]"),
        ('{"messages": [{"role": "user", "content": "x"}]}', "no assistant"),
    ],
    ids=[
        "bad-json",
        "empty-file",
        "not-an-object",
        "no-messages",
        "unknown-role",
        "no-assistant",
    ],
)
def test_check_bad_input_exits_2_with_one_line(tmp_path, capsys, content, needle):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    assert main(["check", str(path)]) == 2
    line = one_line_error(capsys)
    assert needle in line


def test_check_bad_json_names_the_file(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text("{oops", encoding="utf-8")
    assert main(["check", "--json", str(path)]) == 2
    assert f"factledger: {path}: invalid JSON" in one_line_error(capsys)


@pytest.mark.parametrize(
    "lines",
    [
        [
            {"id": "a", "transcript": CLEAN, "expected": {"verdict": "pass"}},
            {"id": "b", "transcript": CLEAN, "expected": {"verdict": "pass"}},
        ],
        [{"id": "a", "transcript": CLEAN, "expected": {"verdict": "pass"}}],
    ],
    ids=["several-cases", "one-case"],
)
def test_check_given_eval_cases_names_eval(tmp_path, capsys, lines):
    path = write_cases(tmp_path, lines)
    assert main(["check", str(path)]) == 2
    assert f"score them with `factledger eval {path}`" in one_line_error(capsys)


def test_check_missing_file_exits_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in one_line_error(capsys)


@pytest.mark.parametrize(
    ("settings", "needle"),
    [
        ("[validation]\nbogus = 1\n", "bogus"),
        ("[validation.severity]\nstall = 'loud'\n", "severity.stall"),
        ("[validation\n", "settings.toml"),
        ("[validation]\nclaim_rules = 'missing_rules.toml'\n", "missing_rules.toml"),
    ],
    ids=["unknown-key", "bad-severity", "toml-syntax", "missing-claim-rules"],
)
def test_bad_config_exits_2_naming_the_key(tmp_path, capsys, settings, needle):
    config = tmp_path / "settings.toml"
    config.write_text(settings, encoding="utf-8")
    assert main(["--config", str(config), "check", str(write_json(tmp_path, CLEAN))]) == 2
    assert needle in one_line_error(capsys)


def test_severity_not_a_table_exits_2(tmp_path, capsys):
    config = tmp_path / "settings.toml"
    config.write_text('[validation]\nseverity = "info"\n', encoding="utf-8")
    assert main(["--config", str(config), "check", str(write_json(tmp_path, CLEAN))]) == 2
    assert "severity" in one_line_error(capsys)


def test_usage_error_is_argparse_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["check"])
    assert info.value.code == 2
    assert "usage: factledger" in capsys.readouterr().err


# --- eval ------------------------------------------------------------------------------------

CASES = [
    {
        "id": "fab",
        "transcript": FABRICATED,
        "expected": {"verdict": "reject", "kinds": ["fabricated_identifier"]},
    },
    {"id": "clean", "transcript": CLEAN, "expected": {"verdict": "pass"}},
    {"id": "missed", "transcript": CLEAN, "expected": {"verdict": "reject", "kinds": ["stall"]}},
]


def test_eval_json_has_the_documented_keys(tmp_path, capsys):
    assert main(["eval", str(write_cases(tmp_path, CASES)), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"cases", "turns", "kinds", "results"}
    assert data["cases"] == 3
    assert data["turns"] == {"tp": 1, "fp": 0, "fn": 1, "tn": 1, "precision": 1.0, "recall": 0.5}
    assert data["kinds"]["fabricated_identifier"]["tp"] == 1
    assert data["kinds"]["stall"]["fn"] == 1
    for row in data["results"]:
        assert set(row) >= {"id", "verdict", "kinds", "expected_verdict", "expected_kinds", "ok"}
    assert [(r["id"], r["verdict"], r["ok"]) for r in data["results"]] == [
        ("fab", "reject", True),
        ("clean", "pass", True),
        ("missed", "pass", False),
    ]
    assert data["results"][0]["kinds"] == ["fabricated_identifier"]
    assert data["results"][2]["expected_kinds"] == ["stall"]


def test_eval_table(tmp_path, capsys):
    assert main(["eval", str(write_cases(tmp_path, CASES))]) == 0
    out = capsys.readouterr().out
    assert "turns: 3 cases  tp=1 fp=0 fn=1 tn=1" in out
    assert "mismatches: 1" in out
    assert "missed: got pass [], expected reject ['stall']" in out


def test_eval_empty_file(tmp_path, capsys):
    path = tmp_path / "empty.jsonl"
    path.write_text("// nothing yet\n\n", encoding="utf-8")
    assert main(["eval", "--json", str(path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cases"] == 0
    assert data["results"] == []


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        ([json.dumps(CASES[0]), "{broken"], ":2: invalid JSON"),
        (["// c", json.dumps(CASES[0]), json.dumps({"id": "x"})], ":3: case has no 'transcript'"),
        ([json.dumps({**CASES[1], "expected": {"verdict": "ok"}})], ":1: expected.verdict"),
    ],
    ids=["malformed-json-line", "missing-transcript", "bad-verdict"],
)
def test_eval_malformed_line_names_file_and_line(tmp_path, capsys, lines, where):
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["eval", str(path)]) == 2
    assert f"factledger: {path}{where}" in one_line_error(capsys)


def test_eval_bad_transcript_names_file_and_line(tmp_path, capsys):
    bad = {"id": "broken", "transcript": {"messages": []}, "expected": {"verdict": "pass"}}
    path = write_cases(tmp_path, [CASES[1], bad])
    assert main(["eval", str(path)]) == 2
    line = one_line_error(capsys)
    assert f"{path}:2 (case broken)" in line
    assert "no 'messages'" in line


@pytest.mark.parametrize("indent", [2, None], ids=["pretty-printed", "one-line"])
def test_eval_given_one_transcript_names_check(tmp_path, capsys, indent):
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(FABRICATED, indent=indent), encoding="utf-8")
    assert main(["eval", str(path)]) == 2
    assert f"check it with `factledger check {path}`" in one_line_error(capsys)


def test_eval_table_says_na_where_a_ratio_is_undefined(tmp_path, capsys):
    only_clean = [{"id": "clean", "transcript": CLEAN, "expected": {"verdict": "pass"}}]
    assert main(["eval", str(write_cases(tmp_path, only_clean))]) == 0
    out = capsys.readouterr().out
    assert "precision=n/a recall=n/a" in out
    assert main(["eval", "--json", str(write_cases(tmp_path, only_clean))]) == 0
    turns = json.loads(capsys.readouterr().out)["turns"]
    assert (turns["precision"], turns["recall"]) == (None, None)


def test_eval_run_under_a_second_shows_no_progress_bar(tmp_path, capsys):
    """A large file that is quick to score: only the report, nothing on stderr."""
    padding = "x" * (300 * 1024)
    cases = [{**CASES[0], "note": padding}, CASES[1]]
    path = write_cases(tmp_path, cases)
    assert path.stat().st_size > 300 * 1024
    assert main(["eval", str(path)]) == 0
    captured = capsys.readouterr()
    assert "turns: 2 cases" in captured.out
    assert captured.err == ""


def test_eval_progress_bar_appears_once_the_delay_has_passed(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("factledger.progress.PROGRESS_DELAY_SECONDS", 0.0)
    assert main(["eval", str(write_cases(tmp_path, CASES))]) == 0
    assert "3/3" in capsys.readouterr().err


def test_eval_missing_file_exits_2(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "none.jsonl")]) == 2
    assert "none.jsonl" in one_line_error(capsys)


# --- every --help ---------------------------------------------------------------------------


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield parser.prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _subparsers(child)


FLAG_ACTIONS = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._HelpAction)


def test_every_option_states_its_default_in_help():
    undocumented = []
    for prog, parser in _subparsers(_parser()):
        help_text = parser.format_help()
        for action in parser._actions:
            if not action.option_strings or isinstance(action, FLAG_ACTIONS):
                continue
            text = action.help or ""
            if "default" not in text:
                undocumented.append(f"{prog} {action.option_strings[0]}")
            elif action.default not in (None, [], argparse.SUPPRESS) and "$" not in text:
                # The value itself, unless it comes from an environment variable the
                # help names.
                shown = {str(action.default)}
                if isinstance(action.default, float):
                    shown.add(f"{action.default:g}")
                assert any(s in help_text for s in shown), (prog, action.option_strings)
    assert undocumented == []


# --- check with sources of truth -------------------------------------------------------


def _repository(path: Path) -> str:
    """A git repository with one commit holding src/app.py; its short SHA."""
    path.mkdir()
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("def build_registry(cfg):\n    return {}\n")
    git = ["git", "-C", str(path), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    out = subprocess.run([*git, "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip()


def _pushed(reply: str) -> dict[str, Any]:
    return {
        "model": "gpt-4o",
        "tools": [{"type": "function", "function": {"name": "git_push", "parameters": {}}}],
        "messages": [
            {"role": "user", "content": "push it"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "git_push", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Everything up-to-date"},
            {"role": "assistant", "content": reply},
        ],
    }


def test_check_with_a_repository_settles_short_shas_at_the_source(tmp_path, capsys):
    real = _repository(tmp_path / "site")
    transcript = write_json(tmp_path, _pushed(f"Pushed: HEAD is {real}, the fix 9d22a7c."))
    # A git tool ran: the short SHA is a commit's, so the identifier check rejects it
    # already; the repository confirms that finding and refutes the full SHA's.
    assert main(["check", str(transcript), "--color", "never"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "verdict: reject"
    assert main(["check", str(transcript), "--repo", str(tmp_path / "site"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["verdict"] == "reject"
    assert [(f["kind"], f["token"]) for f in result["findings"]] == [
        ("fabricated_identifier", "9d22a7c")
    ]
    outcomes = {v["name"]: (v["outcome"], v["source"]) for v in result["verifications"]}
    assert outcomes == {real: ("refuted", "git:site"), "9d22a7c": ("confirmed", "git:site")}


def test_check_names_a_bad_verification_setting(tmp_path, capsys):
    config = tmp_path / "settings.toml"
    config.write_text("[verification]\nthreads = 0\n")
    transcript = write_json(tmp_path, _pushed("Pushed."))
    assert main(["--config", str(config), "check", str(transcript)]) == 2
    assert "verification.threads" in one_line_error(capsys)


@pytest.mark.parametrize(
    ("argv", "config"),
    [
        pytest.param(["--config", "a.toml", "serve"], Path("a.toml"), id="before-the-command"),
        pytest.param(["serve", "--config", "b.toml"], Path("b.toml"), id="after-the-command"),
        pytest.param(
            ["--config", "a.toml", "serve", "--config", "b.toml"], Path("b.toml"), id="after-wins"
        ),
        pytest.param(["serve"], None, id="none"),
    ],
)
def test_serve_takes_the_settings_file_before_or_after_the_command(
    argv: list[str], config: Path | None
) -> None:
    assert _parser().parse_args(argv).config == config
