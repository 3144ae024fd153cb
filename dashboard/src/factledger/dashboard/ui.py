"""What every page shares: the API client for this dashboard, the page guard that turns
an unreachable or failing API into a message (never a traceback), the stylesheet, and
small formatting helpers."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import datetime

import streamlit as st

from factledger.dashboard import palette
from factledger.dashboard.client import (
    API_ENV,
    DEFAULT_API_URL,
    TOKEN_ENV,
    ApiClient,
    ApiError,
    ApiUnavailable,
    Forbidden,
    NotFound,
)
from factledger.dashboard.figures import parse_time
from factledger.dashboard.highlight import stylesheet
from factledger.dashboard.verification import STYLES as VERIFICATION_STYLES

log = logging.getLogger("factledger.dashboard")

_PAGE_CSS = f"""
<style>
.fl-verdict {{ display: inline-block; font-weight: 600; font-size: 0.8rem;
  border-radius: 0.7rem; padding: 0.1rem 0.6rem; margin-right: 0.4rem; }}
.fl-verdict-reject {{ background: {palette.REJECT_BACKGROUND}; color: {palette.REJECT_TEXT}; }}
.fl-verdict-flag {{ background: {palette.FLAG_BACKGROUND}; color: {palette.FLAG_TEXT}; }}
.fl-verdict-pass {{ background: {palette.NEUTRAL_BACKGROUND}; color: {palette.NEUTRAL_TEXT}; }}
.fl-verdict-error {{ background: {palette.NEUTRAL_TEXT}; color: #ffffff; }}
.fl-meta {{ color: #4a5568; font-size: 0.85rem; }}
.fl-request {{ background: #f0f5ff; border: 1px solid #c3dafe; border-radius: 0.5rem;
  padding: 0.6rem 0.9rem; white-space: pre-wrap; }}
.fl-guard {{ font-size: 0.9rem; margin: 0.3rem 0; font-weight: 600; color: #2c5282; }}
.fl-evidence {{ font-size: 0.85rem; margin: 0.15rem 0; }}
.fl-missing {{ color: {palette.REJECT}; font-weight: 600; }}
.fl-present {{ color: #276749; font-weight: 600; }}
</style>
"""


def api_url() -> str:
    return os.environ.get(API_ENV, "").strip() or DEFAULT_API_URL


@st.cache_resource(show_spinner=False)
def _client(url: str, token: str) -> ApiClient:
    return ApiClient(url, token=token or None)


def client() -> ApiClient:
    """The shared client of this dashboard process (one connection pool), reading as
    FACTLEDGER_READ_TOKEN when set."""
    return _client(api_url(), os.environ.get(TOKEN_ENV, "").strip())


@st.cache_data(ttl=60, show_spinner=False)
def _tenants(url: str, token: str) -> tuple[list[str], str]:
    try:
        return _client(url, token).tenants()
    except NotFound:  # a service without tenants: read what it serves
        return [], ""


def tenant_client(api: ApiClient) -> ApiClient:
    """`api` reading the tenant chosen in the sidebar; the chooser appears only when the
    token may read more than one tenant."""
    tenants, default = _tenants(api_url(), os.environ.get(TOKEN_ENV, "").strip())
    if len(tenants) < 2:
        return api
    index = tenants.index(default) if default in tenants else 0
    chosen = st.sidebar.selectbox("Tenant", tenants, index=index, key="fl-tenant")
    return api.with_tenant(chosen)


def styles() -> None:
    """Add the highlighting and page styles to the page (once per run)."""
    st.html(stylesheet() + _PAGE_CSS + VERIFICATION_STYLES)


def guarded(render: Callable[[ApiClient], None]) -> Callable[[], None]:
    """A page function that shows a message instead of a traceback when the API is down
    or answers an error."""

    def page() -> None:
        styles()
        api = client()
        try:
            render(tenant_client(api))
        # Notices are blue (`st.info`): amber is the flag's colour, red the reject's.
        except ApiUnavailable:
            st.info(
                f"**The FactLedger service is not reachable** at `{api.base_url}`.\n\n"
                "Start it with `factledger serve` (or `factledger up` for the service, the "
                "dashboard and demo traffic together), or point the dashboard at it with "
                "`factledger dashboard --api URL`. This page retries when you reload it.",
                icon=":material/cloud_off:",
            )
        except Forbidden as exc:
            st.info(
                f"**The FactLedger API refused this dashboard's read token** ({exc}).\n\n"
                f"Set `{TOKEN_ENV}` for the dashboard to a read token of the tenants it "
                "should show (the service's FACTLEDGER_READ_TOKENS), or to a review token "
                "(FACTLEDGER_REVIEW_TOKENS) where it should label turns too.",
                icon=":material/lock:",
            )
        except ApiError as exc:
            st.error(f"**The FactLedger API answered an error.** {exc}", icon=":material/error:")
        except Exception as exc:  # a bug in a page must not print a traceback to readers
            log.exception("dashboard page failed")
            st.error(f"**This page failed:** {type(exc).__name__}: {exc}", icon=":material/error:")

    page.__name__ = f"page_{render.__module__.rsplit('.', 1)[-1]}"
    return page


def verdict_html(verdict: str) -> str:
    safe = verdict if verdict in ("reject", "flag", "pass") else "pass"
    return f'<span class="fl-verdict fl-verdict-{safe}">{safe}</span>'


def when(value: str | datetime) -> str:
    """An API timestamp as `2025-01-31 14:05:09 UTC`."""
    return parse_time(value).strftime("%Y-%m-%d %H:%M:%S UTC")


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"
