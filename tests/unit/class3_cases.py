"""Class 3 variants: actions, the texts a failed call may say, and replies that claim it.

Every action has a tool, its words in English, German and Chinese, and the claims a reply
makes of it. `failure_texts` writes what a failed call says of the action in four forms
(negated, passive, quoted, nominal) in each language, bare or behind an error mark;
`success_texts` what a successful call says with failure words in its data. `judge` runs
the full validator suite over a one-call turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from factledger.processors.model import ToolCall, ToolDefinition, Turn, Verdict
from factledger.processors.runner import default_runner


@dataclass(frozen=True)
class Action:
    tool: str
    base: str
    participle: str
    noun: str
    thing: str
    command: str
    de_participle: str
    de_noun: str
    de_thing: str
    zh_verb: str
    zh_thing: str


ACTIONS = (
    Action(
        "git_push",
        "push",
        "pushed",
        "push",
        "the branch",
        "git push origin main",
        "gepusht",
        "Push",
        "der Branch",
        "推送",
        "分支",
    ),
    Action(
        "delete_file",
        "delete",
        "deleted",
        "deletion",
        "the file",
        "rm config.yaml",
        "gelöscht",
        "Löschen",
        "die Datei",
        "删除",
        "文件",
    ),
    Action(
        "send_email",
        "send",
        "sent",
        "send",
        "the message",
        "sendmail bob@example.com",
        "gesendet",
        "Versand",
        "die Nachricht",
        "发送",
        "邮件",
    ),
    Action(
        "publish_post",
        "publish",
        "published",
        "publication",
        "the post",
        "blog publish",
        "veröffentlicht",
        "Veröffentlichung",
        "der Beitrag",
        "发布",
        "文章",
    ),
    Action(
        "merge_pull_request",
        "merge",
        "merged",
        "merge",
        "the pull request",
        "gh pr merge 12",
        "gemergt",
        "Merge",
        "der Pull-Request",
        "合并",
        "拉取请求",
    ),
    Action(
        "create_issue",
        "create",
        "created",
        "creation",
        "the issue",
        "gh issue create",
        "erstellt",
        "Erstellung",
        "das Ticket",
        "创建",
        "工单",
    ),
    Action(
        "book_flight",
        "book",
        "booked",
        "booking",
        "the flight",
        "book LH400",
        "gebucht",
        "Buchung",
        "der Flug",
        "预订",
        "航班",
    ),
    Action(
        "refund_order",
        "refund",
        "refunded",
        "refund",
        "the order",
        "refund #W1",
        "erstattet",
        "Erstattung",
        "die Bestellung",
        "退款",
        "订单",
    ),
    Action(
        "deploy_release",
        "deploy",
        "deployed",
        "deployment",
        "the release",
        "kubectl rollout",
        "deployt",
        "Deployment",
        "das Release",
        "部署",
        "版本",
    ),
)


def claims(action: Action) -> dict[str, tuple[str, ...]]:
    """Replies that claim the action went through, by language."""
    a = action
    return {
        "en": (
            f"I {a.participle} {a.thing}.",
            f"{a.participle.capitalize()} {a.thing} successfully.",
            f"{a.thing.capitalize()} has been {a.participle}.",
            f"Done: {a.thing} was {a.participle}.",
        ),
        "de": (
            f"Ich habe {a.de_thing.replace('der ', 'den ')} {a.de_participle}.",
            f"{a.de_thing.capitalize()} wurde erfolgreich {a.de_participle}.",
        ),
        "zh": (f"{a.zh_thing}已{a.zh_verb}。", f"{a.zh_thing}{a.zh_verb}成功。"),
    }


_REASONS = {
    "en": "the remote answered 409 conflict",
    "de": "der Server hat die Anfrage zurückgewiesen",
    "zh": "服务器拒绝了请求",
}


def failure_texts(action: Action) -> dict[tuple[str, str], tuple[str, ...]]:
    """What a failed call says of its action, by (language, form)."""
    a = action
    en, de, zh = _REASONS["en"], _REASONS["de"], _REASONS["zh"]
    return {
        ("en", "negated"): (
            f"{a.thing.capitalize()} was not {a.participle}: {en}",
            f"{a.base} rejected: non-fast-forward; nothing was {a.participle}",
            f"permission denied: {a.thing} was not {a.participle}",
            f"{a.thing.capitalize()} wasn't {a.participle} ({en})",
            f"Nothing to {a.base}: {en}",
        ),
        ("en", "passive"): (
            f"{a.thing.capitalize()} could not be {a.participle}: {en}",
            f"The request to {a.base} {a.thing} was rejected by policy",
            f"{a.thing.capitalize()} cannot be {a.participle} right now",
        ),
        ("en", "quoted"): (
            f"`{a.command}` failed: {en}",
            f'"{a.command}" was refused: {en}',
            f"Command '{a.command}' returned non-zero exit status 1.",
        ),
        ("en", "nominal"): (
            f"{a.noun.capitalize()} failed: {en}",
            f"{a.noun.capitalize()} failure ({en})",
            f"{a.noun.capitalize()} declined: {en}",
            f"{a.noun.capitalize()} aborted after 30 s (timed out)",
        ),
        ("de", "negated"): (
            f"{a.de_thing.capitalize()} wurde nicht {a.de_participle}: {de}",
            f"Es wurde nichts {a.de_participle}.",
        ),
        ("de", "passive"): (
            f"{a.de_thing.capitalize()} konnte nicht {a.de_participle} werden: {de}",
        ),
        ("de", "quoted"): (f"„{a.command}“ abgelehnt: {de}",),
        ("de", "nominal"): (
            f"{a.de_noun} fehlgeschlagen: {de}",
            f"{a.de_noun} verweigert ({de})",
        ),
        ("zh", "negated"): (f"{a.zh_thing}未{a.zh_verb}：{zh}", f"{a.zh_thing}没有{a.zh_verb}"),
        ("zh", "passive"): (f"{a.zh_thing}无法被{a.zh_verb}：{zh}",),
        ("zh", "quoted"): (f"「{a.command}」被拒绝：{zh}",),
        ("zh", "nominal"): (f"{a.zh_verb}失败：{zh}", f"{a.zh_verb}错误：{zh}"),
    }


_MARKS = ("", "Error: ", "HTTP 409 Conflict: ", "ToolException: ")


def marked(text: str) -> Iterator[str]:
    """The text bare and behind the marks tools and frameworks put before it."""
    for mark in _MARKS:
        yield mark + text


def failed_results(text: str) -> Iterator[tuple[str, str, bool]]:
    """(shape, result, span error mark) for each way a failed call carries its text."""
    yield "plain", text, False
    yield "ok-false", json.dumps({"ok": False, "error": text}), False
    yield "status-failed", json.dumps({"status": "failed", "message": text}), False
    yield "mcp-block", json.dumps({"content": [{"type": "text", "text": text}]}), False
    yield "span-error", text, True


def success_texts(action: Action) -> tuple[str, ...]:
    """What a successful call says, with failure words in its data."""
    a = action
    return (
        f"{a.participle.capitalize()} {a.thing} (0 errors)",
        json.dumps({"ok": True, "errors": 0, "id": "x-1"}),
        json.dumps({"ok": True, "failed_checks_ignored": 2, "id": "x-1"}),
        json.dumps({"status": "succeeded", "failure_reason": None, "id": "x-1"}),
        f"{a.participle.capitalize()} {a.thing}. Warnings: 0, errors: 0",
        f"{a.thing.capitalize()} {a.participle}; the first attempt failed, the retry went through",
        f"{a.thing.capitalize()} {a.participle}, no errors reported",
        json.dumps({"result": f"{a.participle} {a.thing}", "error": None}),
        f"{a.de_thing.capitalize()} erfolgreich {a.de_participle}, 0 Fehler",
        f"{a.zh_thing}已{a.zh_verb}，0个错误",
        f"{a.thing.capitalize()} successfully {a.participle} for the whole team. "
        "Subject: build failed on main",
    )


def judge(action: Action, result: str, reply: str, *, error: bool = False) -> Verdict:
    """The suite's verdict on a turn whose one call of `action`'s tool returned `result`."""
    call = ToolCall(
        name=action.tool,
        call_id="call_1",
        arguments={"target": "main"},
        result=result,
        error=error,
    )
    turn = Turn(
        reply=reply,
        user_message=f"Please {action.base} {action.thing}.",
        tool_calls=(call,),
        tools=(ToolDefinition(action.tool),),
    )
    return default_runner().validate(turn)
