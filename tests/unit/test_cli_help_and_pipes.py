"""The command line as a first reader meets it: every command's --help page says what
the command does, `demo` and `up` send the same number of demo turns by default, and
output piped into a reader that stops early (`| head`) ends quietly."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from factledger.cli import DEMO_TURNS, _parser

SHA = "3f9a1c2e7b4d5a6c8e9f0a1b2c3d4e5f6a7b8c9d"
COMMANDS = ("check", "eval", "serve", "up", "dashboard", "replay", "demo")


def _command(name: str) -> argparse.ArgumentParser:
    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise AssertionError("no subcommands")


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_help_page_describes_the_command(name: str) -> None:
    description = _command(name).description or ""
    assert len(description.split()) >= 12, f"`factledger {name} --help` has no description"
    assert description in " ".join(_command(name).format_help().split()) or description


def test_demo_and_up_send_the_same_demo_turns_by_default() -> None:
    demo = _command("demo").parse_args([])
    up = _command("up").parse_args([])
    assert demo.turns == up.demo_turns == DEMO_TURNS


def _piped_into_a_closed_reader(args: list[str]) -> subprocess.CompletedProcess[bytes]:
    # The reader exits at once, so every write of the command meets a closed pipe.
    command = " ".join([sys.executable, "-m", "factledger.cli", *args])
    return subprocess.run(
        ["bash", "-c", f"{command} | true; exit ${{PIPESTATUS[0]}}"],
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [pytest.param(["--help"], id="help"), pytest.param(["check", "{file}"], id="check")],
)
def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path, args: list[str]) -> None:
    transcript = tmp_path / "t.json"
    reply = f"The latest commit is {SHA}.\n" * 200
    transcript.write_text(
        json.dumps(
            {
                "model": "m",
                "tools": [],
                "messages": [
                    {"role": "user", "content": "What is the latest commit?"},
                    {"role": "assistant", "content": reply},
                ],
            }
        )
    )
    ran = _piped_into_a_closed_reader([a.format(file=transcript) for a in args])
    assert b"Broken pipe" not in ran.stderr and b"BrokenPipeError" not in ran.stderr, ran.stderr
    assert ran.stderr == b"", ran.stderr
