"""The Streamlit dashboard; it reads the service's /api/v1 only."""
