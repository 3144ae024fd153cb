"""The dashboard's one colour language: red means reject and amber means flag, on every
page, in every chip, mark, pill and chart; nothing else is drawn in either. Selection,
focus, primary buttons and progress bars take the theme's primary colour, a blue, so a
reader never sees red where nothing was rejected.

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
    colour blue, and Streamlit's own red and orange set to the reject and flag colours
    (they colour `st.error` and `st.warning`)."""
    options = {
        "base": "light",
        "primaryColor": PRIMARY,
        "redColor": REJECT,
        "orangeColor": FLAG,
    }
    return [part for name, value in options.items() for part in (f"--theme.{name}", value)]
