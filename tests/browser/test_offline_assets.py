"""Nothing the service's pages or the dashboard load comes from outside: in Chromium,
every request /docs and each dashboard page make goes to the loopback address,
and Swagger UI still draws the API's operations (its assets are the service's own)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Request, expect

from factledger.service_process import ServiceProcess
from tests.browser.conftest import settled

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
DASHBOARD_PAGES = ["", "/turns", "/verify", "/alerts"]


@pytest.fixture
def outside(page: Page) -> Iterator[list[str]]:
    """The URLs the page requested from any host but loopback (blocked, so a page that
    needs one fails visibly instead of quietly loading it)."""
    requested: list[str] = []

    def watch(request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in LOCAL_HOSTS:
            requested.append(request.url)

    page.on("request", watch)
    page.route(
        lambda url: (urlsplit(url).hostname or "127.0.0.1") not in LOCAL_HOSTS,
        lambda route: route.abort(),
    )
    yield requested


def test_swagger_ui_draws_the_api_from_the_services_own_assets(
    page: Page, service: ServiceProcess, outside: list[str]
):
    page.goto(f"{service.url}/docs")
    expect(page.locator(".opblock").first).to_be_visible()
    expect(page.get_by_text("/api/v1/turns", exact=True).first).to_be_visible()
    assert outside == []


@pytest.mark.parametrize("path", DASHBOARD_PAGES, ids=["overview", "turns", "verify", "alerts"])
def test_dashboard_pages_load_nothing_from_outside(
    page: Page, dashboard: str, outside: list[str], path: str
):
    page.goto(dashboard + path)
    page.wait_for_selector('[data-testid="stMain"]')
    settled(page)
    page.wait_for_timeout(1000)
    assert outside == []
