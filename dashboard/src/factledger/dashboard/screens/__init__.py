"""The dashboard's pages, one module each (`render()`), wired up by `dashboard.app`.

Not named `pages/`: Streamlit reads a `pages/` folder beside the entry script as pages
of its own, beside the ones `st.navigation` declares."""
