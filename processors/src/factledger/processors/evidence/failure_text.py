"""Does a tool's text say that its call failed?

Most tools that fail return no status field: LangChain's error handlers, MCP servers and
hand-written tools hand the model a sentence ("SMTP 550: mailbox unavailable; message not
sent", "Versand fehlgeschlagen", "发送失败：邮件未发送"), an exception's `str()` or a
command's stderr. Its words are then the only record of the outcome, so they are read.

The status text is what a result says of its call: every line of a short result (at most
`SHORT_LINES` lines and `SHORT_CHARS` characters: a status message, an exception, a
command's stderr), else its first line alone (a long result is data whose first line may
be a banner). In it, the call failed when

1. a line opens with an error mark: `Error`, `fatal:`, `Failed`, an exception's type
   (`PushRejected: ...`, `requests.exceptions.HTTPError: ...`, `[Errno 13] ...`), git's
   `! [rejected]`, "permission denied", "command not found", "could not", "unable to",
   an HTTP or SMTP error status, `Fehler`, `Fehlgeschlagen`, `错误`, `失败`, ...;
2. an HTTP or SMTP error status stands anywhere in it (`HTTP 403`, `SMTP 550`, `405
   Method Not Allowed`, `403 Client Error`, smtplib's `(550, b'...')`), or a command's
   non-zero exit status (`returned non-zero exit status 1`);
3. a clause states a failure: "push rejected", "payment declined", "failed to", "could
   not", "timed out", "fehlgeschlagen", "abgelehnt", "被拒绝", "无法", ...; or
4. the action is negated: "nothing was pushed", "message not sent", "was not deleted",
   "nothing to commit", "wurde nicht gesendet", "邮件未发送", with the action verbs of
   every language the shipped claim rules know.

Rules 3 and 4 speak of the call's own action, so they apply to calls that act; the text
of a call named for reading (`get_build`, `list_messages`) describes what it read ("Build
42 failed", "Draft: not sent"), and only rules 1 and 2 on its first line fail it.

Not failures: counts ("0 failed", "2 errors", "errors: 0"), negated failure words ("no
errors", "did not fail"), words glued into identifiers (`failed_checks_ignored`), and a
result whose first clause reports success ("Pushed main; tags not pushed", "Email sent,
1 recipient refused"): the action happened, and only an error mark that opens the text
outweighs that.
"""

from __future__ import annotations

import re
from functools import lru_cache

from factledger.processors.claim_rules import alternation, load_claim_rules

SHORT_LINES = 12
SHORT_CHARS = 1_500
"""A result at most this long is a status message: all its lines are its status text."""
LINE_CHARS = 300
"""Characters of each status line that are read."""

_HTTP_REASON = (
    r"(?:bad request|unauthori[sz]ed|payment required|forbidden|not found|method not allowed|"
    r"not acceptable|request timeout|conflict|gone|precondition failed|payload too large|"
    r"unsupported media type|unprocessable (?:entity|content)|locked|failed dependency|"
    r"too many requests|internal server error|not implemented|bad gateway|"
    r"service unavailable|gateway timeout|client error|server error)\b"
)
# A 4xx/5xx status as protocols and clients print it: named by its protocol or field
# ("HTTP 403", "SMTP 550", "status code: 502", "error 404"), followed by its reason
# phrase ("405 Method Not Allowed", requests' "403 Client Error: Forbidden", httpx's
# "Client error '404 Not Found'"), or smtplib's tuple "(550, b'5.1.1 ...')". A number
# alone ("500 rows inserted") is no status.
_ERROR_STATUS = re.compile(
    r"\b(?:https?(?:/\d(?:\.\d)?)?|smtp|status(?: code)?|statuscode|http status|"
    r"response code|error(?: code)?|code)[ \t]*[:=#]?[ \t]*[(\[]?[45]\d\d\b(?![.,]\d)"
    rf"|\b[45]\d\d[ \t]*[:-]?[ \t]*{_HTTP_REASON}"
    r"|\([45]\d\d,[ \t]*b?['\"]",
    re.IGNORECASE,
)
_ERROR_MARK = re.compile(
    r"(?:[\[(!*>\-]+[ \t]*)?(?:remote:[ \t]*)?(?:"
    r"error\b|err:|fatal\b|failed\b|failure\b|fail:|exception\b|panic:|abort(?:ed)?\b|"
    r"traceback \(most recent call last\)|\[?errno \d+\]|"
    r"\[?(?:remote )?rejected\]|denied\b|refused\b|rejected\b|declined\b|forbidden\b|"
    r"unauthori[sz]ed\b|permission denied|access denied|command not found|"
    r"no such file or directory|could ?n[o']t\b|cannot\b|can't\b|unable to\b|"
    r"an error occurred\b|<error\b|<\?xml[^>]{0,200}\?>[ \t]*<error\b|"
    r"fehler\b|fehlgeschlagen|abgelehnt|verweigert|zugriff verweigert|abgebrochen|"
    r"konnte nicht|kann nicht|错误|失败|拒绝|无法|未能|出错|异常|权限不足|"
    r"✗|❌|⛔)",
    re.IGNORECASE,
)
# An exception's text as `str()`/`repr()` or a traceback's last line print it: its type
# first, then a colon or an opening parenthesis ("PushRejected: ...", "ConnectionError(...").
_EXCEPTION_TYPE = re.compile(
    r"(?:[A-Za-z_]\w{0,40}\.){0,6}[A-Z]\w{0,60}?"
    r"(?:Error|Exception|Failure|Fault|Rejected|Denied|Refused|Timeout|Invalid)\b[ \t]*[:(]"
)
# A failure stated in a clause, anywhere in the status text of a call that acts.
_FAILURE_CLAUSE = re.compile(
    r"\b(?:failed|failure|fails|denied|refused|rejected|aborted|declined|unsuccessful|"
    r"forbidden|unauthori[sz]ed|timed out|could ?n[o']t|cannot|can't|unable to|"
    r"permission denied|access denied|command not found|no such file or directory|"
    r"not (?:allowed|permitted|possible|authori[sz]ed)|"
    r"non-zero exit (?:status|code)|exit (?:status|code)[ \t]*[:=]?[ \t]*[1-9]|"
    r"fehlgeschlagen|gescheitert|abgelehnt|verweigert|abgebrochen|konnten? nicht|"
    r"kann nicht|nicht (?:möglich|erlaubt|zulässig))"
    r"|失败|拒绝|无法|未能|不能|出错|错误|超时|不允许|被拒",
    re.IGNORECASE,
)
# What makes a failure word data, in the words just before or after it: a count ("0
# failed", "2 errors", "failed: 0") or a negation ("no errors", "did not fail").
_COUNT_OR_NEGATION_BEFORE = re.compile(
    r"(?:\b\d+|\b(?:no|not|never|nothing|none|without|zero|keine?|nicht|ohne)|没有|无|未)"
    r"[ \t]*(?:[\w'-]+[ \t]+)?\Z",
    re.IGNORECASE,
)
_COUNT_AFTER = re.compile(r"\A[ \t]*(?:[:=][ \t]*)?\(?\d", re.IGNORECASE)
_SUCCESS_MARK = re.compile(
    r"(?:[\[(]?[ \t]*)?(?:ok\b|okay\b|success\b|successful\w*|succeeded\b|done\b|completed?\b|"
    r"✓|✔|✅|erfolgreich|erledigt|成功|完成)",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.;:!?,\n。；：！？，]| but | aber |但")
_SUCCESS_CLAUSE_WORDS = 12
"""Words of a first clause read for a report of success; a longer one is no headline."""
_SUCCESS_WORDS = frozenset({"successfully", "succeeded", "erfolgreich"})
_EN_NEGATOR = re.compile(r"\b(?:not|never|nothing|none|no|neither|nor)\b|n't\b", re.IGNORECASE)
_DE_NEGATOR = re.compile(r"\b(?:nicht|nichts|kein\w*|nie|niemals)\b", re.IGNORECASE)
_ZH_NEGATOR = ("未", "没有", "没", "尚未", "并未")
_NEGATION_WORDS = 4
"""Words that may stand between a negation and the action it negates ("was not yet
pushed", "die Nachricht wurde nicht gesendet")."""


def text_reports_failure(text: str, *, acting: bool = True) -> bool:
    """Whether a plain-text result says its call failed (see the module docstring).
    `acting`: the call acts (rules 3 and 4 apply), as opposed to one named for reading.
    Not memoised here: `outcomes.result_is_error`, its caller, is."""
    lines = status_lines(text)
    if not lines:
        return False
    first = lines[0]
    if _opens_with_error(first):
        return True
    if _opens_with_success(first):
        return False
    if not acting:
        return _ERROR_STATUS.search(first) is not None
    for line in lines:
        if line is not first and _opens_with_error(line):
            return True
        if _ERROR_STATUS.search(line) or _states_failure(line) or _negates_action(line):
            return True
    return False


def status_lines(text: str) -> list[str]:
    """The lines that speak of the call: all of a short result's, else the first."""
    stripped = text.strip()
    if not stripped:
        return []
    if len(stripped) <= SHORT_CHARS:
        lines = [line.strip()[:LINE_CHARS] for line in stripped.splitlines()]
        lines = [line for line in lines if line]
        if len(lines) <= SHORT_LINES:
            return lines
        return lines[:1]
    end = stripped.find("\n", 0, LINE_CHARS)  # no copy of a long result's rest
    return [stripped[: LINE_CHARS if end == -1 else end].strip()]


def opens_with_error(text: str) -> bool:
    """Whether the text's first line opens with an error mark (rule 1): what a part of a
    result (one of several content blocks, a field beside others) fails its call by."""
    lines = status_lines(text)
    return bool(lines) and _opens_with_error(lines[0])


def _opens_with_error(line: str) -> bool:
    return bool(_ERROR_MARK.match(line) or _EXCEPTION_TYPE.match(line) or _ERROR_STATUS.match(line))


def _opens_with_success(line: str) -> bool:
    """The first clause reports that the action happened: it opens with a success word,
    or holds a success word or an action's participle with no negation ("Pushed main",
    "Email successfully sent to the team", "Nachricht gesendet", "邮件已发送")."""
    if _SUCCESS_MARK.match(line):
        return True
    brk = _CLAUSE_END.search(line)
    clause = line[: brk.start()] if brk else line
    lowered_clause = clause.lower()
    words = [w.strip("!.\"'`") for w in lowered_clause.split()]
    if not words or len(words) > _SUCCESS_CLAUSE_WORDS:
        return False
    if (
        _EN_NEGATOR.search(lowered_clause)
        or _DE_NEGATOR.search(lowered_clause)
        or _FAILURE_CLAUSE.search(clause)
        or _ERROR_STATUS.search(clause)
    ):
        return False  # "cannot be deployed", "push rejected, 0 files pushed"
    vocabulary = _vocabulary()
    if any(w in vocabulary.participles or w in _SUCCESS_WORDS for w in words):
        return True
    return any(phrase in clause for phrase in vocabulary.zh_done)


def _states_failure(line: str) -> bool:
    for m in _FAILURE_CLAUSE.finditer(line):
        before = line[max(0, m.start() - 24) : m.start()]
        if _COUNT_OR_NEGATION_BEFORE.search(before):
            continue
        if _COUNT_AFTER.match(line, m.end()):
            continue
        return True
    return False


def _negates_action(line: str) -> bool:
    """ "nothing was pushed", "not sent", "nothing to commit", "nicht gesendet", "未发送"."""
    vocabulary = _vocabulary()
    lowered_line = line.lower()
    if vocabulary.en.search(lowered_line) or vocabulary.de.search(lowered_line):
        return True
    return vocabulary.zh.search(line) is not None


class _Vocabulary:
    """The action words of the shipped claim rules, as negated patterns."""

    def __init__(self) -> None:
        rules = load_claim_rules().rules
        participles = {w for r in rules for w in r.en if " " not in w}
        self.participles = frozenset(participles | {w for r in rules for w in r.de})
        bases = {b for p in participles for b in _bases(p)}
        done, base = alternation(list(participles)), alternation(list(bases))
        gap = rf"(?:[ \t]+[\w'-]+){{0,{_NEGATION_WORDS}}}?"
        # "no" negates a participle ("no changes were pushed"), but before a base form it
        # is a noun's article ("no merge conflicts"): bases follow verbal negations only.
        self.en = re.compile(
            rf"(?:\b(?:not|never|nothing|none|no)\b|n't\b){gap}[ \t]+(?:{done})\b"
            rf"|(?:\b(?:not|never)\b|n't\b)(?:[ \t]+[\w'-]+){{0,2}}?[ \t]+(?:{base})\b"
            rf"|\bnothing (?:to|was|has been|got) (?:{done}|{base})\b"
        )
        de_words = alternation([w for r in rules for w in r.de])
        self.de = re.compile(rf"\b(?:nicht|nichts|kein\w*|nie){gap}[ \t]+(?:{de_words})\b")
        stems = {_zh_stem(p) for r in rules for p in r.zh}
        stems.discard("")
        self.zh_done = frozenset(p for r in rules for p in r.zh)
        negators = "|".join(sorted(_ZH_NEGATOR, key=len, reverse=True))
        self.zh = re.compile(rf"(?:{negators}).{{0,2}}?(?:{alternation(list(stems))})")


@lru_cache(maxsize=1)
def _vocabulary() -> _Vocabulary:
    return _Vocabulary()


_IRREGULAR_BASES = {
    "sent": ("send",),
    "wrote": ("write",),
    "written": ("write",),
    "ran": ("run",),
    "re-ran": ("re-run",),
    "reran": ("rerun",),
    "paid": ("pay",),
    "bought": ("buy",),
    "reset": ("reset",),
}


def _bases(participle: str) -> tuple[str, ...]:
    """Base forms an English participle may have ("pushed" -> "push", "deleted" ->
    "delete", "committed" -> "commit"); a wrong guess ("delet") matches nothing."""
    if participle in _IRREGULAR_BASES:
        return _IRREGULAR_BASES[participle]
    if not participle.endswith("ed"):
        return ()
    stem = participle[:-2]
    out = [stem, participle[:-1]]
    if len(stem) > 2 and stem[-1] == stem[-2]:
        out.append(stem[:-1])
    if stem.endswith("i"):
        out.append(stem[:-1] + "y")
    return tuple(out)


def _zh_stem(phrase: str) -> str:
    """The verb of a Chinese completion phrase: 已发送 -> 发送, 发送成功 -> 发送."""
    return phrase.removeprefix("已").removesuffix("成功").removesuffix("通过")
