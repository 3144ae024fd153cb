"""/docs (Swagger UI) served from assets installed with the service.

FastAPI's own documentation pages load their JavaScript, CSS and favicon from a CDN; a
service on a closed network would show a blank page. Swagger UI's assets here come from
the pinned `fastapi-offline` package and are served under ASSETS_PATH by the service
itself, so /docs works with nothing outside reachable. There is no /redoc: the ReDoc
bundle fetches its logo from its vendor's CDN.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_PATH = "/docs-assets"


def assets_directory() -> Path:
    """The installed Swagger UI bundle (with the package's other assets)."""
    return Path(str(resources.files("fastapi_offline") / "static"))


def add_docs_pages(app: FastAPI) -> None:
    """Serve the assets and the /docs page on `app` (built with `docs_url=None,
    redoc_url=None`), outside the OpenAPI schema."""
    app.mount(ASSETS_PATH, StaticFiles(directory=assets_directory()), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
            # The spec validator badge would fetch an image from swagger.io.
            swagger_ui_parameters={"validatorUrl": None},
        )
