"""The API documentation page of a running service loads nothing from outside: /docs
(Swagger UI) references only the service's own URLs, and the service serves every asset
it references. /redoc, whose bundle fetches a logo from its vendor, is not served."""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from factledger.service_process import ServiceProcess


class _References(HTMLParser):
    """Every src= and href= of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for name, value in attrs if name in ("src", "href") and value]


def references(page: str) -> list[str]:
    parser = _References()
    parser.feed(page)
    return parser.urls


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with ServiceProcess(tmp_path_factory.mktemp("docs")) as running:
        yield running


def test_docs_page_loads_only_assets_the_service_serves(service: ServiceProcess):
    page = "/docs"
    answer = httpx.get(service.url + page, timeout=10)
    assert answer.status_code == 200
    assert "://" not in answer.text, "the page names an outside URL"
    urls = references(answer.text)
    assert any(url.endswith(".js") for url in urls), urls
    for url in urls:
        assert not urlsplit(url).netloc, url
        asset = httpx.get(urljoin(service.url + page, url), timeout=10)
        assert asset.status_code == 200, url
        assert asset.content, url


def test_swagger_ui_reads_the_services_own_openapi(service: ServiceProcess):
    page = httpx.get(service.url + "/docs", timeout=10).text
    assert "url: '/openapi.json'" in page
    assert '"validatorUrl": null' in page, "the validator badge would load from swagger.io"
    spec = httpx.get(service.url + "/openapi.json", timeout=10).json()
    assert "/api/v1/turns" in spec["paths"]
    assert not any(path.startswith("/docs") for path in spec["paths"])
    assert httpx.get(service.url + "/redoc", timeout=10).status_code == 404
