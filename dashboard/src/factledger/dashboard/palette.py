"""The dashboard's one colour language: red means reject and amber means flag, on every
page, in every chip, mark, pill and chart; nothing else is drawn in either. Green is the
evidence colour: what a tool result of the turn shows (an identifier of the reply it
backs, the real identifier a fabricated one stands beside). Selection, focus, primary
buttons and progress bars take the theme's primary colour, a blue, so a reader never sees
red where nothing was rejected.

The Streamlit theme (`theme_options`, passed to `streamlit run` by `factledger
dashboard`) and the page stylesheets both read these constants.
"""

from __future__ import annotations

from typing import Final

REJECT: Final = "#c53030"
"""Reject: outlines, chart marks and the theme's red."""
REJECT_BACKGROUND: Final = "#fed7d7"
REJECT_TEXT: Final = "#9b2c2c"
FLAG: Final = "#b7791f"
"""Flag: outlines, chart marks and the theme's orange."""
FLAG_BACKGROUND: Final = "#feebc8"
FLAG_TEXT: Final = "#7b341e"
NEUTRAL: Final = "#718096"
"""Neither reject nor flag (a pass, an info finding, a failed call, a token that merely
shows up): slate."""
NEUTRAL_BACKGROUND: Final = "#e2e8f0"
NEUTRAL_TEXT: Final = "#2d3748"
EVIDENCE: Final = "#2f855a"
"""What a tool result shows: outlines and the theme's green (`st.success`)."""
EVIDENCE_MARK: Final = "#9ae6b4"
"""The fill of a marked token that a tool result shows (in the reply, in a payload)."""
EVIDENCE_BACKGROUND: Final = "#c6f6d5"
EVIDENCE_TEXT: Final = "#22543d"
PRIMARY: Final = "#2b6cb0"
"""The theme's primary colour: widgets, selection, focus rings, progress bars."""

SEVERITY_BACKGROUNDS: Final = {
    "reject": REJECT_BACKGROUND,
    "flag": FLAG_BACKGROUND,
    "info": NEUTRAL_BACKGROUND,
}
SEVERITY_TEXT: Final = {"reject": REJECT_TEXT, "flag": FLAG_TEXT, "info": NEUTRAL_TEXT}
SEVERITY_OUTLINES: Final = {"reject": REJECT, "flag": FLAG, "info": NEUTRAL}


def severity_key(severity: str) -> str:
    """`severity` as a key of the tables above: anything but reject or flag is `info`."""
    return severity if severity in ("reject", "flag") else "info"


def theme_options() -> list[str]:
    """The `streamlit run` options of the dashboard's theme: a light base, the primary
    colour blue, and Streamlit's own red, orange and green set to the reject, flag and
    evidence colours (they colour `st.error`, `st.warning` and `st.success`)."""
    options = {
        "base": "light",
        "primaryColor": PRIMARY,
        "redColor": REJECT,
        "orangeColor": FLAG,
        "greenColor": EVIDENCE,
    }
    return [part for name, value in options.items() for part in (f"--theme.{name}", value)]
