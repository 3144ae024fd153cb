"""`factledger dashboard`: the Streamlit command line and environment, the query string
of the turns table, and the subcommand's options."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from factledger import cli
from factledger.dashboard.client import API_ENV, TurnQuery
from factledger.dashboard_cli import dashboard_env, dashboard_url, streamlit_command


def test_streamlit_command_runs_the_app_headless_without_usage_statistics():
    command = streamlit_command(port=8600, host="0.0.0.0", python="/py")
    assert command[:4] == ["/py", "-m", "streamlit", "run"]
    assert Path(command[4]).name == "app.py" and Path(command[4]).is_file()
    options = dict(zip(command[5::2], command[6::2], strict=True))
    assert options["--server.port"] == "8600"
    assert options["--server.address"] == "0.0.0.0"
    assert options["--server.headless"] == "true"
    assert options["--browser.gatherUsageStats"] == "false"


def test_dashboard_env_points_at_the_api_and_keeps_the_rest():
    env = dashboard_env("http://svc:4318/", {"PATH": "/bin"})
    assert env == {
        "PATH": "/bin",
        API_ENV: "http://svc:4318",
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    }


@pytest.mark.parametrize(
    ("host", "url"),
    [("127.0.0.1", "http://127.0.0.1:8501"), ("0.0.0.0", "http://127.0.0.1:8501")],
    ids=["loopback", "all-interfaces-shown-as-loopback"],
)
def test_dashboard_url(host: str, url: str):
    assert dashboard_url(8501, host) == url


@pytest.mark.parametrize(
    ("query", "pairs"),
    [
        pytest.param(
            TurnQuery(),
            [("verdict", "reject"), ("verdict", "flag"), ("limit", "100"), ("offset", "0")],
            id="default-is-rejected-or-flagged",
        ),
        pytest.param(
            TurnQuery(verdicts=(), model="gpt-4o", q="  OPS-1 ", limit=5),
            [("model", "gpt-4o"), ("q", "OPS-1"), ("limit", "5"), ("offset", "0")],
            id="any-verdict-with-filters-and-trimmed-search",
        ),
        pytest.param(
            TurnQuery(verdicts=("pass",), since=datetime(2025, 1, 2, 3, 4, 5)),
            [
                ("verdict", "pass"),
                ("since", "2025-01-02T03:04:05+00:00"),
                ("limit", "100"),
                ("offset", "0"),
            ],
            id="naive-times-are-utc",
        ),
        pytest.param(
            TurnQuery(
                verdicts=(), kind="stall", agent="coder", until=datetime(2025, 1, 1, tzinfo=UTC)
            ),
            [
                ("agent", "coder"),
                ("kind", "stall"),
                ("until", "2025-01-01T00:00:00+00:00"),
                ("limit", "100"),
                ("offset", "0"),
            ],
            id="agent-kind-until",
        ),
    ],
)
def test_turn_query_params(query: TurnQuery, pairs: list[tuple[str, str]]):
    assert query.params() == pairs


def test_dashboard_subcommand_options(monkeypatch: pytest.MonkeyPatch):
    seen: dict[str, object] = {}

    def fake_run(api: str, *, port: int, host: str) -> int:
        seen.update(api=api, port=port, host=host)
        return 0

    monkeypatch.setattr("factledger.dashboard_cli.run_dashboard", fake_run)
    assert cli.main(["dashboard", "--api", "http://svc:1", "--port", "9000"]) == 0
    assert seen == {"api": "http://svc:1", "port": 9000, "host": "127.0.0.1"}
