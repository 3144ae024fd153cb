"""Text that senders and reviewers chose, made inert for the two ways a page shows it.

Model, agent and service names, reviewer names, notes and ids in the address come from
whoever can send spans or labels. Shown as Markdown they would be read as Markdown: an
image (`![](http://elsewhere/x.png)`) makes each viewer's browser fetch an address the
sender chose, a link dresses up as anything. Shown in `st.html` they would be read as
HTML. Every such value passes through one of these on its way to the page.
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote

# CommonMark lets a backslash escape any ASCII punctuation, and the escaped character is
# then plain text; that covers Streamlit's own forms too (`:red[..]`, `:material/x:`, `$`).
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_LINE_BREAKS = re.compile(r"[\r\n]+")
_CODE = re.compile(r"`([^`\n]+)`")


def markdown_text(value: object) -> str:
    """`value` as Markdown that shows exactly its text, on one line: every Markdown (and
    Streamlit) metacharacter escaped, so no image, link, emphasis or directive forms."""
    return _PUNCTUATION.sub(r"\\\1", _LINE_BREAKS.sub(" ", str(value)))


def html_text(value: object) -> str:
    """`value` as HTML text or an attribute value (quotes escaped)."""
    return html.escape(str(value), quote=True)


def code_html(value: object) -> str:
    """`value` as HTML text (`html_text`) whose `code` spans show as code, backticks
    dropped: finding messages and review questions quote identifiers that way."""
    return _CODE.sub(r"<code>\1</code>", html_text(value))


def turn_link(turn_id: str) -> str:
    """The turn page's relative address for `turn_id`, escaped for an HTML attribute."""
    return html_text(f"turns?turn_id={quote(turn_id, safe='')}")
