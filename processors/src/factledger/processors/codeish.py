"""Code-ish names in prose: file names, paths, functions, classes, tests.

Class 5 and mirror drift reason about these; fenced code blocks are skipped because code
the model writes is not a report of what exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .limits import bounded_finditer
from .text import non_overlapping

_EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|java|kt|rb|php|cs|cpp|cc|c|h|hpp|swift|md|rst|txt|"
    "json|ya?ml|toml|ini|cfg|conf|sql|sh|bash|html|css|scss|vue|lock|proto|xml|csv|ipynb|"
    "gradle|tf|dockerfile|mdx"
)
_FILE = re.compile(
    rf"(?<![\w./\-@])(?:[\w.\-]+/){{0,8}}[\w\-]+(?:\.[\w\-]+)?\.(?:{_EXTENSIONS})(?![\w/])"
)
_DIR = re.compile(r"(?<![\w./\-@:])(?:[\w\-]+/){1,8}(?![\w\-])")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?)\((?:[\w\s,=*]{0,40})\)")
_BACKTICKED = re.compile(r"`([A-Za-z_][\w.]{2,80})`")
_TEST = re.compile(r"(?<![\w.])(test_\w{3,})")
# The opening \b as a lookbehind after the first letter: `re` then skips ahead to capitals.
_CAMEL = re.compile(r"([A-Z](?<!\w[A-Z])[a-z]+(?:[A-Z][a-z0-9]+)+)\b")
_SNAKE = re.compile(r"(?<![\w.])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w.])")
# Every file name ends so; one search for it is far cheaper than the scan for `_FILE`,
# whose lookbehind runs at every position.
_FILE_END = re.compile(rf"\.(?:{_EXTENSIONS})(?![\w/])")
# A character or word each pattern needs; patterns absent from this map always run.
_NEEDLES: dict[re.Pattern[str], str] = {
    _DIR: "/",
    _CALL: "(",
    _TEST: "test_",
    _BACKTICKED: "`",
    _SNAKE: "_",
}
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)


@dataclass(frozen=True)
class CodeName:
    text: str
    start: int
    end: int


def code_names(text: str, *, snake_case: bool = False) -> list[CodeName]:
    """Distinct code-ish names outside fenced code, in order of first appearance.

    `snake_case` also takes bare `snake_case` words: right when a sentence is about one
    name (mirror drift), too noisy when counting names in a whole reply (class 5).
    """
    patterns = [_FILE, _DIR, _CALL, _TEST, _BACKTICKED, _CAMEL]
    if snake_case:
        patterns.append(_SNAKE)
    # Fenced code ranks first, so every name inside a code block loses to it.
    spans: list[tuple[int, int, int]] = []
    names: list[CodeName | None] = []
    if "```" in text:
        for m in bounded_finditer(_FENCE, text):
            spans.append((m.start(), m.end(), -1))
            names.append(None)
    for rank, pattern in enumerate(patterns):
        needle = _NEEDLES.get(pattern)
        if needle is not None and needle not in text:
            continue  # cheaper than a regex scan that cannot match
        if pattern is _FILE and _FILE_END.search(text) is None:
            continue
        group = 0 if pattern in (_FILE, _DIR) else 1
        for m in bounded_finditer(pattern, text):
            name = m.group(group)
            if pattern is _DIR and len(name.strip("/")) <= 2:
                continue
            if pattern is _BACKTICKED and not _identifier_like(name):
                continue
            spans.append((m.start(group), m.end(group), rank))
            names.append(CodeName(name, m.start(group), m.end(group)))
    seen: dict[str, CodeName] = {}
    for index in non_overlapping(spans):
        found = names[index]
        if found is None or "://" in text[max(0, found.start - 12) : found.start + 3]:
            continue
        seen.setdefault(found.text, found)
    return sorted(seen.values(), key=lambda n: n.start)


def _identifier_like(name: str) -> bool:
    return "_" in name or "." in name or re.search(r"[a-z][A-Z]", name) is not None


def name_grounded(name: str, haystack_lower: str) -> bool:
    """A name is grounded when it, or for a path its last component, is in the haystack."""
    lowered = name.lower().rstrip("/")
    if lowered in haystack_lower:
        return True
    if "/" in lowered:
        return lowered.rsplit("/", 1)[-1] in haystack_lower
    return False
