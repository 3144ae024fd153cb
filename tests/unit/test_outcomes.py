"""outcomes: did a tool call succeed? Error payload recognition."""

from __future__ import annotations

import pytest

from factledger.processors.evidence.outcomes import call_failed, call_succeeded, result_is_error
from factledger.processors.model import ToolCall

README = (
    "# errkit\n\nA small library for structured error handling.\n\n"
    "## Usage\n\nWrap calls with `errkit.guard()`; every error is logged with context.\n"
)


@pytest.mark.parametrize(
    "text",
    [
        '{"error_code": "AUTH_FAILED", "message": "token expired"}',
        '{"error": "not found"}',
        '{"error": {"code": 404, "message": "missing"}}',
        '{"errors": [{"message": "bad field"}]}',
        '{"Error_Message": "boom"}',
        '{"ok": false}',
        '{"ok": "false"}',
        '{"success": false, "data": null}',
        '{"succeeded": false}',
        '{"status": "failed"}',
        '{"status": " Rejected "}',
        '{"status": "FORBIDDEN"}',
        '{"status_code": 404}',
        '{"http_status": 503, "body": ""}',
        '{"code": 500}',
        '{"status": 401}',
        "Error: repository not found",
        "  error: could not lock ref",
        "fatal: not a git repository",
        "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'",
        "HTTP/1.1 403 Forbidden",
        "HTTP 403 Forbidden",
        "http/2 429 Too Many Requests",
        "404 Not Found",
        "500 Internal Server Error",
        "Permission denied (publickey).",
        "command not found: kubectl",
        "No such file or directory: config.yaml",
        "Fehler: Datei nicht gefunden",
        "错误：权限不足",
        "bash: kubectl: command not found",
    ],
    ids=[
        "error_code",
        "error-string",
        "error-object",
        "errors-non-empty",
        "error-key-case-insensitive",
        "ok-false",
        "ok-false-string",
        "success-false",
        "succeeded-false",
        "status-failed",
        "status-rejected-padded",
        "status-forbidden-upper",
        "status_code-404",
        "http_status-503",
        "code-500",
        "status-int-401",
        "Error-banner",
        "indented-error-banner",
        "fatal-banner",
        "traceback",
        "http-1.1-403",
        "http-403-without-version",
        "http2-429-lowercase",
        "bare-404-not-found",
        "bare-500",
        "permission-denied",
        "command-not-found",
        "no-such-file",
        "german-fehler",
        "chinese-error",
        "command-not-found-after-the-shell-name",
    ],
)
def test_error_payload_is_recognised(text):
    assert result_is_error(text) is True


@pytest.mark.parametrize(
    "text",
    [
        README,
        '{"status": "ok"}',
        '{"status": "success", "id": 7}',
        '{"errors": []}',
        '{"error": null, "data": [1]}',
        '{"error": "", "ok": true}',
        '{"error_code": 0}',
        '{"ok": true, "status_code": 201}',
        '{"status_code": 200}',
        '{"code": 0, "msg": "fine"}',
        '{"status_code": true}',
        "[1, 2, 3]",
        "Created branch feature/x",
        "The build log shows no error.",
        "",
        "   ",
        "{not json but fine}",
        "HTTP/1.1 200 OK",
        "errorless run",
    ],
    ids=[
        "readme-mentioning-error-in-body",
        "status-ok",
        "status-success",
        "errors-empty-list",
        "error-null",
        "error-empty-string",
        "error_code-zero",
        "ok-true-201",
        "status_code-200",
        "code-zero",
        "status_code-bool-not-int",
        "json-list",
        "plain-text",
        "plain-text-mentioning-error",
        "empty",
        "whitespace",
        "brace-not-json",
        "http-200",
        "errorless-word",
    ],
)
def test_success_payload_is_not_an_error(text):
    assert result_is_error(text) is False


def test_a_long_result_fails_by_its_first_line_only_and_a_short_one_by_any_line():
    # A long result is data (a log, a file) whose later lines may say anything; a short
    # one is a status message or a command's stderr, where git prints `error:` last.
    assert result_is_error("x" * 2_000 + "\nError: late") is False
    assert result_is_error("x" * 2_000 + "\nnothing was pushed") is False
    assert result_is_error(" " * 10 + "Error: early") is True
    assert result_is_error("To /srv/app.git\n ! [rejected] main -> main (fetch first)") is True
    assert result_is_error("x" * 400 + "\nerror: failed to push some refs") is True


def test_deeply_nested_result_is_not_an_error_and_does_not_raise():
    assert result_is_error("[" * 100_000) is False


@pytest.mark.parametrize(
    ("call", "failed"),
    [
        (ToolCall(name="push", result="ok"), False),
        (ToolCall(name="push", result='{"status": "ok"}'), False),
        (ToolCall(name="push", result="ok", error=True), True),
        (ToolCall(name="push", result=None), True),
        (ToolCall(name="push", result=""), False),
        (ToolCall(name="push", result='{"ok": false}'), True),
        (ToolCall(name="push", result="ok", origin="prose"), True),
    ],
    ids=[
        "plain-result-succeeds",
        "status-ok-succeeds",
        "explicit-error-mark-fails",
        "no-recorded-result-fails",
        "empty-result-succeeds",
        "error-payload-fails",
        "prose-call-never-ran",
    ],
)
def test_call_failed(call, failed):
    assert call_failed(call) is failed
    assert call_succeeded(call) is not failed


# A failure hidden inside a wrapper: framework envelopes (`content`, LlamaIndex's
# `raw_output`, an HTTP client's `data`, `output`, `result`), JSON or Python-literal text
# inside them (a dict's `str()`, as the OpenAI Agents SDK hands a tool's dict back to the
# model), content blocks, an `is_error` flag.
@pytest.mark.parametrize(
    "text",
    [
        '{"content": {"ok": false, "error": "push rejected"}}',
        '{"raw_output": {"error": "push rejected"}, "is_error": false}',
        '{"data": {"result": {"ok": false, "error": "push rejected"}}}',
        '{"output": "{\\"ok\\": false, \\"error\\": \\"push rejected\\"}"}',
        "{'ok': False, 'error': 'push rejected'}",
        "{\"result\": \"{'ok': False, 'error': 'push rejected'}\"}",
        "{'content': 'push rejected', 'tool_name': 'git_push', "
        "'raw_output': \"{'ok': False, 'error': 'push rejected'}\", 'is_error': False}",
        '{"is_error": true, "content": "push rejected"}',
        '{"isError": true}',
        '{"content": [{"type": "text", "text": "{\\"ok\\": false, \\"error\\": \\"nope\\"}"}]}',
        '{"output": "Error: push rejected"}',
        '{"result": {"status": "error", "message": "push rejected"}}',
        '{"response": {"status_code": 502, "body": "Bad Gateway"}}',
    ],
    ids=[
        "error-object-in-content",
        "error-object-in-raw-output",
        "two-wrappers-down",
        "json-text-in-output",
        "python-literal-dict",
        "python-literal-in-result",
        "llamaindex-tool-output-repr",
        "is-error-flag",
        "is-error-camel-case",
        "json-in-content-block",
        "error-banner-in-output",
        "status-error-in-result",
        "http-status-in-response",
    ],
)
def test_error_inside_a_wrapper_is_recognised(text):
    assert result_is_error(text) is True


@pytest.mark.parametrize(
    "text",
    [
        '{"ok": true, "error": null, "errors": []}',
        '{"data": {"items": [], "error": null, "errors": []}}',
        "{'ok': True, 'error': None}",
        '{"result": {"run": {"id": "run_42", "status": "failed", "conclusion": "failure"}}}',
        '{"data": {"builds": [{"id": 1, "status": "failed", "error": "timeout"}]}}',
        '{"content": "The error budget is fine; the deploy error rate is 0.1%."}',
        '{"content": [{"type": "text", "text": "Build finished with 0 errors."}]}',
        '{"is_error": false, "content": "pushed 3 commits"}',
        '{"output": "errors: 0, warnings: 2"}',
        "{not json and not a literal, error: maybe}",
    ],
    ids=[
        "error-null-errors-empty",
        "nested-error-null",
        "python-literal-success",
        "looked-up-record-that-failed",
        "listing-of-failed-records",
        "prose-mentioning-error",
        "content-block-mentioning-errors",
        "is-error-false",
        "error-count-zero",
        "brace-text-neither-json-nor-literal",
    ],
)
def test_success_inside_a_wrapper_is_not_an_error(text):
    assert result_is_error(text) is False


@pytest.mark.parametrize(
    "text",
    [
        "An error occurred while running the tool. Please try again.",
        "An error occurred while running the tool. Please try again. Error: push rejected",
    ],
    ids=["fixed-text", "with-the-exception"],
)
def test_openai_agents_sdk_tool_error_text_is_a_failure(text):
    # The Agents SDK's default_tool_error_function output, which the model gets instead of
    # the exception (older SDKs append it).
    assert result_is_error(text) is True


# In-band failure: the call's own outcome is the top level of its result, or of an
# envelope that wraps the whole result (wrapper keys and envelope metadata only). Records
# the call returned, under keys of their own or in lists, are data.
@pytest.mark.parametrize(
    "text",
    [
        '{"status": "failed", "message": "deploy rejected by policy"}',
        '{"success": false, "message": "quota exceeded"}',
        '{"ok": false, "reason": "branch protected"}',
        '{"status_code": 422, "detail": "invalid ref"}',
        '{"error": "rate limited", "data": null}',
        '{"result": {"status": "failed", "message": "deploy rejected"}}',
        '{"data": {"success": false}}',
        '{"output": "{\\"status\\": \\"failed\\"}", "tool_name": "deploy"}',
        '{"content": [{"type": "text", "text": "{\\"status\\": \\"rejected\\"}"}], '
        '"isError": false}',
        '{"response": {"code": 500, "message": "upstream failed"}}',
        '{"result": {"data": {"status": "failed"}}}',
    ],
    ids=[
        "top-level-status-failed",
        "top-level-success-false",
        "top-level-ok-false",
        "top-level-http-422",
        "top-level-error-text",
        "envelope-status-failed",
        "envelope-success-false",
        "envelope-json-text-with-tool-name",
        "mcp-single-content-block-status-rejected",
        "envelope-code-500",
        "envelope-inside-envelope",
    ],
)
def test_the_calls_own_outcome_fields_are_read_at_the_top_and_through_envelopes(text):
    assert result_is_error(text) is True


@pytest.mark.parametrize(
    "text",
    [
        '{"order": {"id": "#W1", "payment": {"status": "failed"}}}',
        '{"result": {"order": {"status": "failed"}}}',
        '{"runs": [{"id": 1, "status": "failed"}, {"id": 2, "status": "success"}]}',
        '[{"id": 1, "status": "failed"}]',
        '{"ok": true, "result": {"status": "failed"}}',
        '{"data": {"status": "failed"}, "count": 1, "page": 1}',
        '{"status": 200, "data": {"code": 500}}',
        '{"content": [{"type": "text", "text": "{\\"status\\": \\"failed\\"}"}, '
        '{"type": "text", "text": "{\\"status\\": \\"ok\\"}"}]}',
    ],
    ids=[
        "record-under-its-own-key",
        "record-under-a-key-inside-an-envelope",
        "listing-of-runs",
        "top-level-list-of-records",
        "wrapper-beside-an-ok-outcome",
        "wrapper-beside-paging-fields",
        "record-code-beside-http-200",
        "one-of-several-content-blocks",
    ],
)
def test_status_fields_of_returned_records_are_data(text):
    assert result_is_error(text) is False


def _run(result: str, name: str = "execute_code") -> ToolCall:
    return ToolCall(name=name, arguments={"code": "print(total)"}, result=result)


# A code run states its outcome by its exit status, on the first or last line of its
# output or under an exit key; with no status, a traceback that is the whole output.
@pytest.mark.parametrize(
    ("call", "failed"),
    [
        (_run("exitcode: 1 (execution failed)\nCode output: \nNameError: total"), True),
        (_run("exitcode: 0 (execution succeeded)\nCode output: 42"), False),
        (_run("exitcode: 0 (execution succeeded)\nCode output: Error: no rows, using 0"), False),
        (_run("Exit code: 1\nOutput:\nModuleNotFoundError: No module named 'pandas'"), True),
        (_run("Exit code: 0\nOutput:\n42"), False),
        (_run("Compiling...\nsegfault in worker\n[Process exited with code 139]"), True),
        (_run("build ok\nProcess exited with code 0"), False),
        (_run("CompletedProcess(args=['pytest'], returncode=1, stdout='1 failed')"), True),
        (_run("CompletedProcess(args=['pytest'], returncode=0, stdout='3 passed')"), False),
        (_run("exit status 2", name="bash"), True),
        (_run('{"exit_code": 1, "stdout": "", "stderr": "boom"}'), True),
        (_run('{"returncode": 0, "stdout": "42", "stderr": "warning: slow"}'), False),
        (_run('{"result": {"exitcode": 2, "output": "timeout"}}'), True),
        (_run("Code output:\nTraceback (most recent call last):\nKeyError: 'a'"), True),
        (_run('{"stdout": "", "stderr": "Traceback (most recent call last):\\nValueError"}'), True),
        (_run('{"stdout": "partial", "stderr": "Traceback (most recent call last):\\nE"}'), False),
        (_run("rows: 12\nchecking exit code: 1 from the old job\ndone"), False),
        (_run("The script printed an error message for row 3 and went on.\n42"), False),
        (ToolCall(name="get_ci_job", arguments={"job": "build"}, result="Exit code: 1"), False),
        (ToolCall(name="run_command", arguments={"command": "make"}, result="Exit code: 2"), True),
    ],
    ids=[
        "ag2-exitcode-1-fails",
        "ag2-exitcode-0-succeeds",
        "exit-0-succeeds-though-output-says-error",
        "exit-code-line-fails",
        "exit-code-0-line-succeeds",
        "process-exited-last-line-fails",
        "process-exited-0-succeeds",
        "completed-process-returncode-1-fails",
        "completed-process-returncode-0-succeeds",
        "exit-status-line-of-a-shell-fails",
        "structured-exit-code-fails",
        "structured-returncode-0-succeeds-despite-stderr",
        "exit-key-one-envelope-down-fails",
        "labelled-traceback-as-whole-output-fails",
        "stderr-traceback-with-empty-stdout-fails",
        "stderr-traceback-beside-output-is-no-status",
        "exit-code-in-the-middle-of-output-is-data",
        "mentioning-an-error-is-no-failure",
        "exit-code-of-a-looked-up-ci-job-is-data",
        "command-argument-makes-it-a-code-run",
    ],
)
def test_code_run_outcome_is_its_exit_status(call, failed):
    assert call_failed(call) is failed


@pytest.mark.parametrize(
    ("text", "failed"),
    [
        ('{"ok": null, "status": "done"}', False),
        ('{"Ok": "FALSE"}', True),
        ('{"success": "false", "items": []}', True),
        ('{"error": {}, "errors": [], "fault": 0, "exception": ""}', False),
        ('{"error": 0.0, "error_message": false}', False),
        ('{"error_type": "timeout", "error_details": "no answer in 30s"}', True),
        ('{"error_type": "timeout", "error_details": ""}', False),
        ('{"status": "failed", "elapsed": NaN}', True),  # JSON that only json.loads reads
        ('{"status": "failed", "note": "\\ud800"}', True),
        ('{"order": 123456789012345678901234567890, "status": "shipped"}', False),
        ("{1: 'first', 'OK': False}", True),  # a Python literal with a key that is no str
        ('{"order_id": "A1", "carrier": "UPS"}', False),  # no field that marks anything
    ],
    ids=[
        "ok-null",
        "ok-false-text",
        "success-false-text",
        "empty-error-fields",
        "zero-and-false-error-fields",
        "error-descriptor",
        "half-an-error-descriptor",
        "nan",
        "lone-surrogate",
        "big-integer",
        "python-literal",
        "plain-record",
    ],
)
def test_outcome_fields_of_a_result_object(text: str, failed: bool) -> None:
    assert result_is_error(text) is failed
