"""The dashboard's entry script: `streamlit run dashboard/app.py` (what `factledger
dashboard` runs). It reads the service URL from FACTLEDGER_API and talks to /api/v1 only.

Pages: Overview (/), Turns (/turns, /turns?turn_id=...), Verify (/verify), Alerts (/alerts).
"""

from __future__ import annotations

import streamlit as st

from factledger.dashboard.screens import alerts, overview, turns, verify
from factledger.dashboard.ui import api_url, guarded

PAGES = (
    (overview.render, "Overview", "overview", ":material/monitoring:"),
    (turns.render, "Turns", "turns", ":material/forum:"),
    (verify.render, "Verify", "verify", ":material/fact_check:"),
    (alerts.render, "Alerts", "alerts", ":material/notifications:"),
)


def main() -> None:
    # An emoji favicon is drawn in the page; a :material/...: one is fetched from Google.
    st.set_page_config(page_title="FactLedger", page_icon="🔎", layout="wide")
    pages = [
        st.Page(guarded(render), title=title, url_path=path, icon=icon, default=index == 0)
        for index, (render, title, path, icon) in enumerate(PAGES)
    ]
    page = st.navigation(pages)
    with st.sidebar:
        st.caption(f"FactLedger · API `{api_url()}`")
    page.run()


if __name__ == "__main__":
    main()
