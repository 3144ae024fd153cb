"""What each finding rests on in the turn's tool trace: one sentence per finding, worded
for its kind, and the pieces of the trace to mark.

Each kind has its own evidence, read from the finding's fields as its validator filled
them (`processors/validators/`):

- class 3 (`error_reported_as_success`): the call that failed and the error it returned;
- `unregistered_tool_call`, `citation_unregistered_tool`: the tools that were offered,
  without this one; `citation_uncalled_tool`: the calls that did run;
- class 4b (`ungrounded_tool_argument`, `missing_tool_arguments`): the argument, and where
  it could have come from (the user request, an earlier tool result) or that it came from
  nowhere;
- `unfetched_citation`: the fetches of the session and their URLs, and where the cited
  source showed up without being fetched (a search result);
- identifier kinds (fabricated, borrowed): the token looked up in the tool results, the
  arguments and the request, and the real identifier the validator compared it with
  (`real`: the nearest one a tool returned, with its call); a class-5 set, once for the
  whole set (`finding_sets`): its invented names, and its real ones with the call that
  shows each; negated: the result that shows what the reply denies; a contradicted state:
  the record that gives the object another state;
- `ungrounded_quantity`: the results the number was looked up in;
- claims, summaries and stalls: the calls that succeeded, or that none ran.

Every part and mark carries a `Tone`, and only `backed` and `real` are shown green: a
finding's own evidence (an error, an invented value, a tool nobody offered) is `against`,
never green.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factledger.dashboard.evidence import Tone, Trace, Where, source_label
from factledger.dashboard.finding_sets import FindingGroup, finding_groups

MAX_SHOWN_CHARS = 160
"""Tokens longer than this are cut in a sentence (the reply and the payloads show all)."""
MAX_LISTED = 12
"""Tool names listed in a sentence; more are counted ("and 8 more")."""
_PLACEHOLDERS = frozenset(
    {
        "no tools offered",
        "no tool calls in this turn",
        "no successful tool call",
        "no fetch-type tool call",
    }
)
"""What validators put in `checked_against` when there was nothing to check against."""


@dataclass(frozen=True)
class Part:
    """A piece of an evidence sentence: prose, or (`code`) a token, name or value."""

    text: str
    tone: Tone | None = None
    code: bool = False


@dataclass(frozen=True)
class CallMark:
    """`text` to mark, in `tone`, in the arguments or result of the turn's call `call`."""

    call: int
    where: Where
    text: str
    tone: Tone


@dataclass(frozen=True)
class CallBadge:
    """A note on the turn's call `call` as a whole ("not offered", "missing content")."""

    call: int
    text: str
    tone: Tone


@dataclass(frozen=True)
class FindingEvidence:
    """One finding's evidence sentence and the marks it puts on the tool trace."""

    kind: str
    severity: str
    token: str
    parts: tuple[Part, ...]
    marks: tuple[CallMark, ...] = ()
    badges: tuple[CallBadge, ...] = ()

    @property
    def sentence(self) -> str:
        """The sentence as plain text."""
        return "".join(p.text for p in self.parts)


def finding_evidence(
    findings: Iterable[Mapping[str, Any]],
    tool_calls: Sequence[Mapping[str, Any]],
    user_message: str = "",
    spans: Iterable[Mapping[str, Any]] = (),
) -> list[FindingEvidence]:
    """The evidence of each finding, in the findings' order: one per distinct (kind,
    token, call), one per class-5 set, none for `validator_error` (a validator that raised
    has no evidence). `spans` (the turn's) give the error text of a failed call that
    recorded no result."""
    trace = Trace.of(tool_calls, user_message, spans)
    listed = list(findings)
    seen: set[tuple[str, str, str]] = set()
    out: list[FindingEvidence] = []
    for group in finding_groups(listed):
        finding = listed[group.first]
        if group.is_set:
            out.append(_set_evidence(group, listed, trace))
            continue
        kind = str(finding.get("kind", ""))
        key = (kind, str(finding.get("token") or ""), str(finding.get("call_id") or ""))
        if key in seen or kind == "validator_error":
            continue
        seen.add(key)
        parts, marks, badges = _BUILDERS.get(kind, _as_stated)(finding, trace)
        out.append(
            FindingEvidence(
                kind=kind,
                severity=str(finding.get("severity", "")),
                token=key[1],
                parts=tuple(parts),
                marks=tuple(dict.fromkeys(marks)),
                badges=tuple(dict.fromkeys(badges)),
            )
        )
    return out


def marks_on(found: Iterable[FindingEvidence], call: int, where: Where) -> list[tuple[str, Tone]]:
    """The (text, tone) marks the evidence puts on one call's arguments or result."""
    marks = (m for e in found for m in e.marks if m.call == call and m.where == where)
    return list(dict.fromkeys((m.text, m.tone) for m in marks))


def severity_on(found: Iterable[FindingEvidence], call: int) -> str:
    """The worst severity of the findings whose evidence marks or badges call `call`
    (`info` when none does): the colour its `against` marks take."""
    severities = {
        e.severity
        for e in found
        if any(m.call == call for m in e.marks) or any(b.call == call for b in e.badges)
    }
    return next((s for s in ("reject", "flag") if s in severities), "info")


def badges_on(found: Iterable[FindingEvidence], call: int) -> list[tuple[str, Tone]]:
    """The (text, tone) badges the evidence puts on one call."""
    return list(dict.fromkeys((b.text, b.tone) for e in found for b in e.badges if b.call == call))


# ---- one builder per kind ---------------------------------------------------------------

_Built = tuple[list[Part], list[CallMark], list[CallBadge]]


def _code(text: str, tone: Tone | None = None) -> Part:
    cut = text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"
    return Part(cut, tone, code=True)


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:MAX_LISTED])
    more = len(names) - MAX_LISTED
    return f"{shown} and {more} more" if more > 0 else shown


def _token(finding: Mapping[str, Any]) -> str:
    return str(finding.get("token") or "")


def _checked(finding: Mapping[str, Any]) -> list[str]:
    """The finding's `checked_against` without the validators' "nothing there" notes."""
    return [str(n) for n in finding.get("checked_against") or () if n not in _PLACEHOLDERS]


def _identifier(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """Fabricated, borrowed and confabulated identifiers: the token looked up."""
    token = _token(finding)
    results = trace.holding(token, "result")
    arguments = trace.holding(token, "arguments")
    parts = [_code(token), Part(" ")]
    marks = [CallMark(i, "result", form, "backed") for i, form in results]
    marks += [CallMark(i, "arguments", form, "seen") for i, form in arguments]
    if results:
        where = ", ".join(trace.label(i) for i, _ in results)
        parts.append(Part(f"in the result of {where}", "backed"))
    elif trace.calls:
        parts.append(Part("✗ in no tool result", "against"))
    else:
        parts.append(Part("✗ in no tool result: no tool was called", "against"))
    elsewhere = []
    if arguments:
        elsewhere.append("in the arguments of " + ", ".join(trace.label(i) for i, _ in arguments))
    if token in trace.user_message:
        elsewhere.append("in the user request")
    if elsewhere:
        parts.append(Part(f" ({'; '.join(elsewhere)})"))
    if finding.get("kind") == "borrowed_identifier" and not results:
        parts.append(Part(", yet the reply presents it as a tool's output"))
    for real in finding.get("real") or ():
        shown = str(real.get("token") or "")
        call_id = real.get("call_id")
        parts += [
            Part("; the tools returned "),
            _code(shown, "real"),
            Part(f" in {source_label(str(real.get('tool', '')), call_id)}", "real"),
        ]
        own = trace.index_of({"call_id": call_id})
        calls = [own] if own is not None else None
        marks += [
            CallMark(i, "result", form, "real") for i, form in trace.holding(shown, "result", calls)
        ]
    return parts, marks, []


def _set_evidence(
    group: FindingGroup, findings: Sequence[Mapping[str, Any]], trace: Trace
) -> FindingEvidence:
    """A class-5 set once: its invented names, and its real names with the call that
    shows each (green: they back what the reply says)."""
    members = [findings[i] for i in group.indices]
    severities = {str(f.get("severity", "")) for f in members}
    severity = next((s for s in ("reject", "flag") if s in severities), members[0].get("severity"))
    count = len(group.invented)
    parts = [Part(f"{count} names presented as existing that no tool result shows: ")]
    marks: list[CallMark] = []
    for n, name in enumerate(group.invented):
        parts += [*([Part(", ")] if n else []), _code(name, "against")]
        marks += [
            CallMark(i, "arguments", form, "seen") for i, form in trace.holding(name, "arguments")
        ]
    if group.real:
        parts.append(Part("; beside them, in the tools: "))
        for n, real in enumerate(group.real):
            parts += [*([Part(", ")] if n else []), _code(real.token, "backed")]
            parts.append(Part(f" ✓ in {real.source}", "backed"))
            marks += [
                CallMark(i, "result", form, "backed")
                for i, form in trace.holding(real.token, "result")
            ]
    else:
        parts.append(Part("; no name of the set is in a tool result"))
    return FindingEvidence(
        kind=str(members[0].get("kind", "")),
        severity=str(severity),
        token=", ".join(group.invented),
        parts=tuple(parts),
        marks=tuple(dict.fromkeys(marks)),
    )


def _negated(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """The reply denies what a tool result shows: that result is the evidence against it.
    Its validator compares case-insensitively, and so does this lookup."""
    token = _token(finding)
    results = trace.holding(token, "result", fold=True)
    marks = [CallMark(i, "result", form, "against") for i, form in results]
    if results:
        shows = Part(
            "is in the result of " + ", ".join(trace.label(i) for i, _ in results), "against"
        )
    else:
        shows = Part("is in a tool result of " + (_names(_checked(finding)) or "this turn"))
    parts = [_code(token), Part(" "), shows, Part(", yet the reply says it does not exist")]
    return parts, marks, []


def _contradicted_state(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """A state the reply gives an object, and the record of it that says otherwise (its
    validator notes `id: state`)."""
    note = str(finding.get("checked_note") or "")
    object_id, _, recorded = note.partition(": ")
    calls = [i for i in trace.named(_checked(finding)) if not trace.failed(i)]
    holding = trace.holding(recorded, "result", calls, fold=True) if recorded else []
    marks = [CallMark(i, "result", form, "against") for i, form in holding]
    where = ", ".join(trace.label(i) for i, _ in holding) or _names(_checked(finding))
    parts = [
        Part("the reply says "),
        _code(object_id or "the object"),
        Part(" is "),
        _code(_token(finding)),
    ]
    if recorded:
        parts += [
            Part(", but "),
            Part(f"{where or 'a tool'} records it as ", "against"),
            _code(recorded, "against"),
        ]
    return parts, marks, []


def _ungrounded_quantity(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """A number given as a tool's that no result holds: the results it was looked up in."""
    looked = _names(_checked(finding))
    where = f"no result of {looked} holds it" if looked else "no tool result holds it"
    return (
        [
            _code(_token(finding)),
            Part(" — "),
            Part(where + ", nor a list's count or sum", "against"),
        ],
        [],
        [],
    )


def _failed_call(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """Class 3: the call that failed and what it answered."""
    own = trace.index_of(finding)
    named = [i for i in trace.named(_checked(finding)) if trace.failed(i)]
    failed = list(dict.fromkeys(([own] if own is not None else []) + named))
    parts = [Part("the reply says "), _code(_token(finding)), Part(", but ")]
    marks: list[CallMark] = []
    if not failed:
        names = _names(_checked(finding)) or "a call"
        return [*parts, Part(f"{names} failed in this turn", "against")], marks, []
    for n, index in enumerate(failed):
        if n:
            parts.append(Part("; "))
        parts.append(_code(trace.label(index)))
        said, lines = trace.error(index)
        if not said:
            parts.append(Part(" failed (no error text recorded)", "against"))
            continue
        parts += [Part(" failed", "against"), Part(": "), _code(said, "against")]
        marks += [CallMark(index, "result", line, "against") for line in lines]
    return parts, marks, []


def _offered(finding: Mapping[str, Any]) -> Part:
    offered = _checked(finding)
    if not offered:
        return Part("no tools were offered to the model")
    return Part(f"the tools offered: {_names(sorted(offered))}")


def _unregistered_call(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """A call to a tool nobody offered: the offered tools, without it."""
    name = _token(finding)
    own = trace.index_of(finding)
    calls = [own] if own is not None else trace.named([name])
    prose = any(trace.calls[i].get("origin") == "prose" for i in calls)
    how = "was written out in the reply as a call" if prose else "was called"
    parts = [
        _code(name, "against"),
        Part(f" {how}, but it is not among the offered tools", "against"),
        Part("; "),
        _offered(finding),
    ]
    return parts, [], [CallBadge(i, "not offered", "against") for i in calls]


def _citation_unregistered(finding: Mapping[str, Any], trace: Trace) -> _Built:
    parts = [
        Part("the reply cites "),
        _code(_token(finding), "against"),
        Part(", which is not among the offered tools", "against"),
        Part("; "),
        _offered(finding),
    ]
    return parts, [], []


def _citation_uncalled(finding: Mapping[str, Any], trace: Trace) -> _Built:
    ran = _checked(finding)
    where = f"the calls that ran: {_names(ran)}" if ran else "no tool was called"
    parts = [
        Part("the reply cites "),
        _code(_token(finding)),
        Part(", an offered tool "),
        Part("that no call of this turn ran", "against"),
        Part(f"; {where}"),
    ]
    return parts, [], []


def _ungrounded_argument(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """An argument value nothing supplied: where it could have come from, or nowhere.
    Like its validator, only the request and the results of earlier calls count: a call's
    own result often echoes its input."""
    path, _, value = _token(finding).partition("=")
    own = trace.index_of(finding)
    if own is None:
        holders = trace.holding(value, "arguments")
        own = holders[0][0] if holders else None
    caller = trace.label(own) if own is not None else "a call"
    parts = [_code(caller), Part(" sent "), _code(path), Part(" = "), _code(value, "against")]
    earlier = trace.holding(value, "result", range(own if own is not None else 0))
    marks = [CallMark(i, "result", form, "backed") for i, form in earlier]
    sources = ["the user request"] if value and value in trace.user_message else []
    sources += [f"the result of {trace.label(i)}" for i, _ in earlier]
    if sources:
        parts += [Part("; it stands in "), Part(", ".join(sources), "backed")]
    else:
        parts += [
            Part(": "),
            Part("in neither the user request nor an earlier tool result", "against"),
            Part(", it came from nowhere"),
        ]
    if own is None:
        return parts, marks, []
    form = trace.form(own, "arguments", value)
    if form is not None:
        marks.append(CallMark(own, "arguments", form, "against"))
    echo = trace.form(own, "result", value)
    if echo is not None:
        marks.append(CallMark(own, "result", echo, "seen"))
        parts.append(Part(" (the call's own result echoes it, which cannot ground it)"))
    later = trace.holding(value, "result", range(own + 1, len(trace.calls)))
    marks += [CallMark(i, "result", form, "seen") for i, form in later]
    return parts, marks, []


_CALLED_WITHOUT = re.compile(r"^(?P<name>.*)\((?P<params>[^()]*)\)$")
"""A missing-arguments token: `gh_put_file(content, message)`."""


def _missing_arguments(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """Required arguments a call left out, or values its plan named and it dropped."""
    token = _token(finding)
    m = _CALLED_WITHOUT.match(token)
    name, missing = (m.group("name"), m.group("params")) if m else (token, "")
    own = trace.index_of(finding)
    caller = trace.label(own) if own is not None else name
    message = str(finding.get("message") or "")
    marks: list[CallMark] = []
    badges = [CallBadge(own, f"missing {missing}", "against")] if own is not None else []
    if "the plan" in message:
        parts = [
            Part("the plan before "),
            _code(caller),
            Part(" named a value for "),
            _code(missing),
            Part(", but the call sent none", "against"),
        ]
    else:
        parts = [
            _code(caller),
            Part(" was called without "),
            _code(missing, "against"),
            Part(", which its schema requires"),
        ]
        if "not valid JSON" in message:
            parts.append(Part("; its arguments are not valid JSON", "against"))
        elif own is not None:
            sent = trace.calls[own].get("arguments")
            keys = [str(k) for k in sent] if isinstance(sent, Mapping) else []
            parts.append(Part(f"; it sent {', '.join(keys)}" if keys else "; it sent nothing"))
    if own is not None and trace.failed(own):
        said, lines = trace.error(own)
        if said:
            parts += [Part("; the tool answered "), _code(said, "against")]
            marks += [CallMark(own, "result", line, "against") for line in lines]
    return parts, marks, badges


_URL = re.compile(r"https?://[^\s\"'<>)\]]+", re.IGNORECASE)


def _unfetched_citation(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """A cited source no fetch retrieved: the fetches and the URLs they read, and where
    the source showed up without being opened (a search result is not a fetch)."""
    url = _token(finding)
    fetch_names = _checked(finding)
    fetches = trace.named(fetch_names)
    parts = [Part("the reply cites "), _code(url), Part("; ")]
    marks: list[CallMark] = []
    if fetches:
        parts.append(Part("the fetches: "))
        for n, index in enumerate(fetches):
            urls = _URL.findall(trace.text(index, "arguments"))
            if n:
                parts.append(Part("; "))
            parts += [_code(trace.label(index)), Part(" → ")]
            parts.append(_code(", ".join(urls)) if urls else Part("no URL"))
        parts += [Part("; "), Part("none retrieved it", "against")]
        held = trace.holding(url, "arguments", fetches)
        marks += [CallMark(i, "arguments", form, "backed") for i, form in held]
    elif fetch_names:
        parts += [
            Part(f"the fetches of earlier turns: {_names(fetch_names)}; "),
            Part("none retrieved it", "against"),
        ]
    else:
        parts.append(Part("no call of this session fetched a page", "against"))
    others = [i for i in range(len(trace.calls)) if i not in fetches]
    listed = trace.holding(url, "result", others)
    if listed:
        where = ", ".join(trace.label(i) for i, _ in listed)
        parts += [Part(" — "), Part(f"listed in the result of {where}: seen, never opened", "seen")]
        marks += [CallMark(i, "result", form, "seen") for i, form in listed]
    return parts, marks, []


def _claim(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """A claimed action no successful call backs: the calls that did succeed."""
    ran = _checked(finding)
    backing = (
        Part(f"the calls that succeeded ({_names(ran)}) do not back it", "against")
        if ran
        else Part("no tool call of this session succeeded", "against")
    )
    return [Part("the reply claims "), _code(_token(finding)), Part("; "), backing], [], []


def _no_call(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """A recap or a promise to act in a turn that ran nothing."""
    ran = [c for c in trace.calls if c.get("origin") != "prose"]
    what = "this turn ran no tool" if not ran else "no call of this turn backs it"
    return [_code(_token(finding)), Part(" — "), Part(what, "against")], [], []


def _placeholder(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """Made-up data reported as a result: where the placeholder stood."""
    where = str(finding.get("checked_note") or "the reply")
    return [_code(_token(finding)), Part(" — "), Part(f"made up, in {where}", "against")], [], []


def _artifact(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """A file the reply presupposes: no call of the session downloaded or saved one."""
    what = "no call of this session downloaded or saved a file"
    return [_code(_token(finding)), Part(" — "), Part(what, "against")], [], []


def _as_stated(finding: Mapping[str, Any], trace: Trace) -> _Built:
    """A kind this page has no evidence for: the finding's own message."""
    return [Part(str(finding.get("message") or _token(finding)))], [], []


_BUILDERS: dict[str, Callable[[Mapping[str, Any], Trace], _Built]] = {
    "fabricated_identifier": _identifier,
    "borrowed_identifier": _identifier,
    "confabulated_identifier_set": _identifier,
    "negated_existing_identifier": _negated,
    "contradicted_record_state": _contradicted_state,
    "ungrounded_quantity": _ungrounded_quantity,
    "error_reported_as_success": _failed_call,
    "unregistered_tool_call": _unregistered_call,
    "citation_unregistered_tool": _citation_unregistered,
    "citation_uncalled_tool": _citation_uncalled,
    "ungrounded_tool_argument": _ungrounded_argument,
    "missing_tool_arguments": _missing_arguments,
    "unfetched_citation": _unfetched_citation,
    "claim_without_tool": _claim,
    "summary_without_action": _no_call,
    "stall": _no_call,
    "placeholder_as_result": _placeholder,
    "presupposed_artifact": _artifact,
}
"""Keyed by the kind strings of `processors.kinds.Kind` (a test keeps them in step)."""
