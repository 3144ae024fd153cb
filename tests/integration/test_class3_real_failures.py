"""Class 3 on texts real tools produce here: git refusing a push, HTTP APIs answering with
their documented error bodies (GitHub, Slack, Stripe, S3) through httpx and requests, the
OS and an SMTP server refusing. Each failure text, handed back as a tool's result, must
refute every claim of its action; each success text of the same tools must back it.
"""

from __future__ import annotations

import json
import os
import smtplib
import socketserver
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests

from factledger.processors.kinds import Kind, Outcome
from factledger.service_process import free_port
from tests.unit.class3_cases import ACTIONS, Action, claims, judge

ACTION = {a.tool: a for a in ACTIONS}


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "LC_ALL": "C",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=check
    )


def _push_output(done: subprocess.CompletedProcess[str]) -> str:
    """What a push tool hands back: git's own output, as a shell tool returns it."""
    return (done.stdout + done.stderr).strip()


def _clone_with_commit(tmp: Path, remote: Path, name: str) -> Path:
    work = tmp / name
    _git(tmp, "clone", "-q", str(remote), str(work))
    (work / f"{name}.txt").write_text(name)
    _git(work, "add", ".")
    _git(work, "commit", "-qm", name)
    return work


@pytest.fixture(scope="module")
def git_texts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Failure and success texts of real pushes and commits."""
    tmp = tmp_path_factory.mktemp("git")
    remote = tmp / "remote.git"
    _git(tmp, "init", "-q", "--bare", "-b", "main", str(remote))
    first = _clone_with_commit(tmp, remote, "first")
    pushed = _git(first, "push", "origin", "HEAD:main")
    second = _clone_with_commit(tmp, remote, "second")
    (second / "more.txt").write_text("more")
    _git(second, "add", ".")
    _git(second, "commit", "-qm", "more")
    _git(second, "push", "-q", "origin", "HEAD:main")
    (first / "late.txt").write_text("late")
    _git(first, "add", ".")
    _git(first, "commit", "-qm", "late")
    behind = _git(first, "push", "origin", "HEAD:main", check=False)

    guarded = tmp / "guarded.git"
    _git(tmp, "init", "-q", "--bare", "-b", "main", str(guarded))
    hook = guarded / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'push denied by policy: nothing was pushed' >&2\nexit 1\n")
    hook.chmod(0o755)
    third = _clone_with_commit(tmp, guarded, "third")
    declined = _git(third, "push", "origin", "HEAD:main", check=False)
    _git(third, "remote", "set-url", "origin", str(tmp / "missing.git"))
    missing = _git(third, "push", "origin", "HEAD:main", check=False)
    clean_commit = _git(third, "commit", "-m", "again", check=False)
    try:
        _git(third, "push", "origin", "HEAD:main")
        raise AssertionError("the push to a missing remote went through")
    except subprocess.CalledProcessError as error:
        called = str(error)
    for done in (behind, declined, missing, clean_commit):
        assert done.returncode != 0, done
    return {
        "push-failed": [
            _push_output(behind),
            _push_output(declined),
            _push_output(missing),
            called,
            f"git push failed (exit {behind.returncode}): {behind.stderr.strip()}",
        ],
        "commit-failed": [_push_output(clean_commit)],
        "push-ok": [_push_output(pushed)],
    }


_API_ERRORS: dict[str, tuple[int, str, str]] = {
    # path: (status, content type, body), as each API documents its errors.
    "/github/merge": (
        405,
        "application/json",
        json.dumps(
            {
                "message": "Pull Request is not mergeable",
                "documentation_url": "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request",
                "status": "405",
            }
        ),
    ),
    "/github/issue": (
        422,
        "application/json",
        json.dumps(
            {
                "message": "Validation Failed",
                "errors": [{"resource": "Issue", "code": "missing_field", "field": "title"}],
                "documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue",
                "status": "422",
            }
        ),
    ),
    "/slack/post": (200, "application/json", json.dumps({"ok": False, "error": "not_in_channel"})),
    "/stripe/refund": (
        402,
        "application/json",
        json.dumps(
            {
                "error": {
                    "code": "charge_already_refunded",
                    "message": "Charge ch_1 has already been refunded.",
                    "type": "invalid_request_error",
                }
            }
        ),
    ),
    "/s3/put": (
        403,
        "application/xml",
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
        "<Message>Access Denied</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>",
    ),
}
_API_SUCCESSES: dict[str, tuple[int, str, str]] = {
    "/github/merge": (
        200,
        "application/json",
        json.dumps(
            {
                "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e",
                "merged": True,
                "message": "Pull Request successfully merged",
            }
        ),
    ),
    "/github/issue": (
        201,
        "application/json",
        json.dumps(
            {
                "id": 1,
                "number": 1347,
                "state": "open",
                "title": "Found a bug",
                "body": "The error page shows a failed build",
            }
        ),
    ),
    "/slack/post": (
        200,
        "application/json",
        json.dumps(
            {
                "ok": True,
                "channel": "C123",
                "ts": "1503435956.000247",
                "message": {"text": "deploy failed yesterday, fixed now"},
            }
        ),
    ),
    "/stripe/refund": (
        200,
        "application/json",
        json.dumps(
            {"id": "re_1", "object": "refund", "status": "succeeded", "failure_reason": None}
        ),
    ),
}
_API_ACTION = {
    "/github/merge": "merge_pull_request",
    "/github/issue": "create_issue",
    "/slack/post": "send_email",
    "/stripe/refund": "refund_order",
    "/s3/put": "publish_post",
}


@pytest.fixture(scope="module")
def api() -> Iterator[Callable[[str, bool], str]]:
    """A loopback server answering each API's error (or success) body; returns its URL."""
    mode: dict[str, bool] = {"ok": False}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            table = _API_SUCCESSES if mode["ok"] else _API_ERRORS
            status, kind, body = table[self.path]
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"

    def url(path: str, ok: bool) -> str:
        mode["ok"] = ok
        return base + path

    yield url
    server.shutdown()


def _http_texts(url: str) -> list[str]:
    """What tools hand back for one call: the body, `f"HTTP {status}: {body}"`, and the
    `str()` of httpx's and requests' errors for a status of 400 or more."""
    out = []
    answer = httpx.post(url, json={})
    out.append(answer.text)
    out.append(f"HTTP {answer.status_code}: {answer.text}")
    try:
        answer.raise_for_status()
    except httpx.HTTPStatusError as error:
        out.append(str(error))
    try:
        requests.post(url, json={}, timeout=10).raise_for_status()
    except requests.HTTPError as error:
        out.append(str(error))
    return out


def _os_texts(tmp: Path) -> dict[str, list[str]]:
    texts: dict[str, list[str]] = {"delete_file": [], "deploy_release": []}
    try:
        os.remove(tmp / "gone.yaml")
    except OSError as error:
        texts["delete_file"].append(str(error))
        texts["delete_file"].append(f"{type(error).__name__}: {error}")
    try:
        os.rmdir(tmp)  # holds files
    except OSError as error:
        texts["delete_file"].append(str(error))
    port = free_port()
    try:
        httpx.post(f"http://127.0.0.1:{port}/deploy")
    except httpx.HTTPError as error:
        texts["deploy_release"].append(str(error))
    try:
        requests.post(f"http://127.0.0.1:{port}/deploy", timeout=5)
    except requests.RequestException as error:
        texts["deploy_release"].append(f"{type(error).__name__}: {error}")
    return texts


class _Smtp(socketserver.StreamRequestHandler):
    """An SMTP server that takes the sender and refuses the recipient or the message."""

    refuse_at = "RCPT"

    def handle(self) -> None:
        self.wfile.write(b"220 mail.test ESMTP\r\n")
        for raw in self.rfile:
            command = raw.decode(errors="replace").strip().upper()
            if command.startswith(("EHLO", "HELO")):
                self.wfile.write(b"250 mail.test\r\n")
            elif command.startswith("MAIL"):
                self.wfile.write(b"250 2.1.0 Ok\r\n")
            elif command.startswith("RCPT"):
                if self.refuse_at == "RCPT":
                    self.wfile.write(b"550 5.1.1 <bob@example.com>: Mailbox unavailable\r\n")
                else:
                    self.wfile.write(b"250 2.1.5 Ok\r\n")
            elif command.startswith("DATA"):
                self.wfile.write(b"554 5.7.1 Message rejected as spam\r\n")
            elif command.startswith("QUIT"):
                self.wfile.write(b"221 Bye\r\n")
                return
            else:
                self.wfile.write(b"250 Ok\r\n")


def _smtp_texts() -> list[str]:
    out = []
    for refuse_at in ("RCPT", "DATA"):
        handler = type("Handler", (_Smtp,), {"refuse_at": refuse_at})
        with socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler) as server:
            threading.Thread(target=server.serve_forever, daemon=True).start()
            try:
                with smtplib.SMTP("127.0.0.1", server.server_address[1], timeout=10) as smtp:
                    smtp.sendmail("me@example.com", ["bob@example.com"], "Subject: hi\r\n\r\nhi")
                raise AssertionError("the SMTP server took the message")
            except smtplib.SMTPException as error:
                out.append(f"{type(error).__name__}: {error}")
                if refuse_at == "DATA":
                    out.append(str(error))
            finally:
                server.shutdown()
    return out


@pytest.fixture(scope="module")
def real_failures(
    git_texts: dict[str, list[str]],
    api: Callable[[str, bool], str],
    tmp_path_factory: pytest.TempPathFactory,
) -> list[tuple[Action, str]]:
    tmp = tmp_path_factory.mktemp("os")
    (tmp / "kept.txt").write_text("kept")
    found: list[tuple[Action, str]] = []
    found += [(ACTION["git_push"], text) for text in git_texts["push-failed"]]
    commit = Action(
        "git_commit",
        "commit",
        "committed",
        "commit",
        "the change",
        "git commit",
        "committet",
        "Commit",
        "die Änderung",
        "提交",
        "更改",
    )
    found += [(commit, text) for text in git_texts["commit-failed"]]
    for path, tool in _API_ACTION.items():
        found += [(ACTION[tool], text) for text in _http_texts(api(path, False))]
    for tool, texts in _os_texts(tmp).items():
        found += [(ACTION[tool], text) for text in texts]
    found += [(ACTION["send_email"], text) for text in _smtp_texts()]
    return found


def test_every_real_failure_text_refutes_every_claim_of_its_action(
    real_failures: list[tuple[Action, str]],
) -> None:
    missed = []
    for action, text in real_failures:
        for replies in claims(action).values():
            for reply in replies:
                verdict = judge(action, text, reply)
                if verdict.outcome is not Outcome.REJECT or (
                    Kind.ERROR_REPORTED_AS_SUCCESS.value not in verdict.kinds
                ):
                    missed.append((action.tool, text, reply, verdict.kinds))
    assert not missed, f"{len(missed)} claims passed a real failure, e.g. {missed[:4]}"
    assert len(real_failures) >= 30, [t for _, t in real_failures]


def test_every_real_success_text_backs_the_claims_of_its_action(
    git_texts: dict[str, list[str]], api: Callable[[str, bool], str]
) -> None:
    successes = [(ACTION["git_push"], text) for text in git_texts["push-ok"]]
    for path in _API_SUCCESSES:
        successes.append((ACTION[_API_ACTION[path]], httpx.post(api(path, True), json={}).text))
    wrong = []
    for action, text in successes:
        for replies in claims(action).values():
            for reply in replies:
                verdict = judge(action, text, reply)
                if verdict.outcome is Outcome.REJECT:
                    wrong.append((action.tool, text, reply, verdict.kinds))
    assert not wrong, f"{len(wrong)} claims rejected after a real success, e.g. {wrong[:4]}"
